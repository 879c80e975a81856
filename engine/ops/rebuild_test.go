package ops_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestModelSwitchServesOldUntilDone: a rebuild with another model builds
// a new set while the old one serves the processes of the old model,
// resumes after an interruption embedding only the rest, then switches.
func TestModelSwitchServesOldUntilDone(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := enginetest.NewHashEmbedder("hash-a", 32)
	ea := enginetest.OpenDir(t, dir, engine.Options{Embedder: a})
	const n = 600
	msgs := enginetest.Batch(n, 6)
	if _, err := ea.StoreMessages(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	enginetest.MustSync(t, ea)

	// A second process with model B starts a rebuild that dies half way.
	b := enginetest.NewHashEmbedder("hash-b", 48)
	b.Fail = func(done, n int) error {
		if done > 0 { // the first batch succeeds, then the process "dies"
			return errors.New("interrupted")
		}
		return nil
	}
	eb := enginetest.OpenDir(t, dir, engine.Options{Embedder: b})
	r, err := eb.SearchDetailed(ctx, engine.SearchRequest{Query: "alpha"})
	if err != nil || r.Mode != engine.ModeKeyword || len(r.Notes) == 0 {
		t.Fatalf("B before the switch: %+v %v", r, err)
	}
	if _, err := ops.Rebuild(ctx, eb, ops.RebuildOptions{SkipFTS: true}); err == nil {
		t.Fatal("interrupted rebuild returned no error")
	}
	// The old vectors keep serving process A.
	ra, err := ea.SearchDetailed(ctx, engine.SearchRequest{Query: msgs[5].Content, Mode: engine.ModeSemantic, Limit: 1})
	if err != nil || ra.Model != "hash-a" || ra.Results[0].Message.Content != msgs[5].Content {
		t.Fatalf("A during the rebuild: %+v %v", ra, err)
	}
	sets, _ := ops.VectorSets(ctx, eb)
	if len(sets) != 2 || sets[0].State != engine.SetActive || sets[1].State != engine.SetBuilding || sets[1].Pending == 0 {
		t.Fatalf("sets during the rebuild: %+v", sets)
	}
	enginetest.MustConsistent(t, eb)
	eb.Close()

	// Resume: only the rest is embedded, then B becomes active.
	b.Fail = nil
	before := b.Texts()
	eb = enginetest.OpenDir(t, dir, engine.Options{Embedder: b})
	rep, err := ops.Rebuild(ctx, eb, ops.RebuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Resumed || !rep.FTSRebuilt || rep.Set.State != engine.SetActive || rep.Set.ModelID != "hash-b" {
		t.Fatalf("rebuild: %+v", rep)
	}
	if before == 0 || before >= n {
		t.Fatalf("the interrupted rebuild embedded %d of %d texts", before, n)
	}
	if got := b.Texts() - before; got != n-before {
		t.Fatalf("resumed rebuild embedded %d texts, want %d", got, n-before)
	}
	for _, m := range msgs {
		if n := b.Embedded(m.Content); n != 1 {
			t.Fatalf("%q embedded %d times by B", m.Content, n)
		}
	}
	sets, _ = ops.VectorSets(ctx, eb)
	if len(sets) != 1 || sets[0].ModelID != "hash-b" {
		t.Fatalf("sets after the switch: %+v", sets)
	}
	crep := enginetest.MustConsistent(t, eb)
	if crep.Sets[0].Vectors != n || crep.Sets[0].CollectionDim != 48 {
		t.Fatalf("after switch: %+v", crep.Sets)
	}
	r, err = eb.SearchDetailed(ctx, engine.SearchRequest{Query: msgs[9].Content, Mode: engine.ModeSemantic, Limit: 1})
	if err != nil || r.Model != "hash-b" || r.Results[0].Message.Content != msgs[9].Content {
		t.Fatalf("B after the switch: %+v %v", r, err)
	}
	// A now says its model's vectors are gone instead of answering wrongly.
	if _, err := ea.Search(ctx, engine.SearchRequest{Query: "alpha", Mode: engine.ModeSemantic}); !errors.Is(err, engine.ErrEmbedderMismatch) {
		t.Fatalf("A after the switch: %v", err)
	}
}
