package ops_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestFaultGCCollapseWithoutModel: near-duplicate collapse compares stored
// vectors, so it runs in a process that opened the engine without an
// embedder (a one-shot `cairn gc`), as long as a vector set is stored.
func TestFaultGCCollapseWithoutModel(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	e, err := enginetest.OpenEngine(ctx, dir, engine.Options{Now: clock, Embedder: enginetest.NewHashEmbedder("hash-v1", 64), NoVectorWorker: true})
	if err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour
	// Same confidence: the newer one is kept.
	dup := gcNoteAt(t, e, "a", "alpha beta gamma delta epsilon", now.Add(-10*day))
	best := gcNoteAt(t, e, "a", "alpha beta gamma delta epsilon zeta", now.Add(-9*day))
	gcNoteAt(t, e, "a", "completely different words here", now.Add(-8*day))
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e, err = enginetest.OpenEngine(ctx, dir, engine.Options{Now: clock, NoVectorWorker: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	pol := []ops.RetentionPolicy{{Name: "dedup", Channels: []string{"agent-notes:*"}, CollapseThreshold: 0.85, CollapseMinAge: 2 * day}}
	rep, err := ops.GC(ctx, e, ops.GCOptions{Policies: pol, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Notes) != 0 {
		t.Errorf("notes %q: collapse was skipped", rep.Notes)
	}
	if got := gcIDs(rep); !slices.Equal(got, []int64{dup}) || rep.Messages[0].DuplicateOf != best {
		t.Fatalf("collapse without a model would delete %v (%+v), want [%d] as a duplicate of %d", got, rep.Messages, dup, best)
	}
}

func gcNoteAt(t *testing.T, e *engine.Engine, agent, content string, at time.Time) int64 {
	t.Helper()
	res, err := e.WriteNote(context.Background(), engine.NewNote{Agent: agent, Content: content, CreatedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	return res.ID
}
