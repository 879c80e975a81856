package ops_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// storeBeforeModel stores n messages with no embedder, as a store written
// before any model existed, and returns its directory.
func storeBeforeModel(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	e := enginetest.OpenDir(t, dir, engine.Options{})
	if _, err := e.StoreMessages(context.Background(), enginetest.Batch(n, 5)); err != nil {
		t.Fatal(err)
	}
	b, err := ops.VectorBacklog(context.Background(), e, "")
	if err != nil || b.Messages != int64(n) || b.Queued != int64(n) || b.Set != 0 || b.Model != "" {
		t.Fatalf("backlog before any model: %+v %v", b, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBacklogQueuedOnFirstUseWithAModel(t *testing.T) {
	ctx := context.Background()
	dir := storeBeforeModel(t, 50)
	emb := enginetest.NewHashEmbedder("hash-a", 32)
	e := enginetest.OpenDir(t, dir, engine.Options{Embedder: emb, NoVectorWorker: true})
	b, err := ops.VectorBacklog(ctx, e, "")
	if err != nil || b.Model != "hash-a" || b.Active != "hash-a" || b.Set == 0 || b.Queued != 50 || b.Messages != 50 {
		t.Fatalf("backlog after the first open with the model: %+v %v", b, err)
	}
	st, err := ops.StoreStats(ctx, e)
	if err != nil || st.Vectors != b {
		t.Fatalf("stats show the backlog: %+v, want %+v (%v)", st.Vectors, b, err)
	}
	// Without the worker nothing is embedded in the background.
	if emb.Texts() != 0 {
		t.Fatalf("NoVectorWorker engine embedded %d texts", emb.Texts())
	}
	// Another model's backlog is every message: it has no set yet.
	if o, err := ops.VectorBacklog(ctx, e, "hash-b"); err != nil || o.Queued != 50 || o.Set != 0 || o.Active != "hash-a" {
		t.Fatalf("backlog of another model: %+v %v", o, err)
	}
}

func TestSemanticSearchWithPendingVectorsSaysSo(t *testing.T) {
	ctx := context.Background()
	dir := storeBeforeModel(t, 30)
	e := enginetest.OpenDir(t, dir, engine.Options{Embedder: enginetest.NewHashEmbedder("hash-a", 32), NoVectorWorker: true})
	for _, mode := range []engine.SearchMode{engine.ModeSemantic, engine.ModeHybrid} {
		r, err := e.SearchDetailed(ctx, engine.SearchRequest{Query: "alpha bravo", Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if mode == engine.ModeSemantic && len(r.Results) != 0 {
			t.Fatalf("semantic results before any vector: %+v", r.Results)
		}
		if mode == engine.ModeHybrid && (len(r.Results) == 0 || !r.Results[0].VectorMissing) {
			t.Fatalf("hybrid finds by keyword and marks vector_missing: %+v", r.Results)
		}
		if len(r.Notes) != 1 || r.Notes[0].Kind != engine.NoteVectorsBuilding || r.Notes[0].Fallback() ||
			!strings.Contains(r.Notes[0].Message, "30 messages are still queued") {
			t.Fatalf("%s search notes: %+v", mode, r.Notes)
		}
	}
	enginetest.MustSync(t, e)
	r, err := e.SearchDetailed(ctx, engine.SearchRequest{Query: "alpha bravo", Mode: engine.ModeSemantic})
	if err != nil || len(r.Notes) != 0 || len(r.Results) == 0 {
		t.Fatalf("semantic search after the backlog: %+v %v", r, err)
	}
}

func TestRebuildEmbedsABacklogOnce(t *testing.T) {
	ctx := context.Background()
	dir := storeBeforeModel(t, 60)
	emb := enginetest.NewHashEmbedder("hash-a", 32)
	e := enginetest.OpenDir(t, dir, engine.Options{Embedder: emb, NoVectorWorker: true})
	rep, err := ops.Rebuild(ctx, e, ops.RebuildOptions{SkipFTS: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Embedded != 60 || !rep.Resumed || rep.Set.State != engine.SetActive || emb.Texts() != 60 {
		t.Fatalf("rebuild of a 60-message backlog: %+v, %d texts embedded", rep, emb.Texts())
	}
	sets, err := ops.VectorSets(ctx, e)
	if err != nil || len(sets) != 1 {
		t.Fatalf("one vector set: %+v %v", sets, err)
	}
	enginetest.MustConsistent(t, e)
	// With nothing queued, a rebuild builds a new set and switches to it,
	// embedding each message once more.
	rep, err = ops.Rebuild(ctx, e, ops.RebuildOptions{SkipFTS: true})
	if err != nil || rep.Embedded != 60 || rep.Resumed || rep.Set.ID == sets[0].ID || emb.Texts() != 120 {
		t.Fatalf("second rebuild: %+v %v, %d texts", rep, err, emb.Texts())
	}
	enginetest.MustConsistent(t, e)
}

func TestWorkerDrainsABacklogInLargeBatches(t *testing.T) {
	dir := storeBeforeModel(t, 600)
	emb := enginetest.NewHashEmbedder("hash-a", 32)
	var batches []int
	emb.Fail = func(_, n int) error { batches = append(batches, n); return nil }
	e := enginetest.OpenDir(t, dir, engine.Options{Embedder: emb})
	enginetest.MustSync(t, e)
	enginetest.MustConsistent(t, e)
	emb.Lock()
	defer emb.Unlock()
	if emb.Texts() != 600 {
		t.Fatalf("embedded %d texts for 600 messages", emb.Texts())
	}
	// The worker and SyncVectors share the backlog; either way no call
	// embeds fewer than 256 texts unless it takes the tail.
	small := 0
	for _, n := range batches {
		if n < 256 {
			small++
		}
	}
	if small > 2 {
		t.Fatalf("embed calls of %v texts: want batches of at least 256 but for the tails", batches)
	}
}

// A long-running engine (its worker on) fills a backlog by itself while
// keyword search answers at once.
func TestWorkerFillsABacklogInTheBackground(t *testing.T) {
	ctx := context.Background()
	dir := storeBeforeModel(t, 300)
	e := enginetest.OpenDir(t, dir, engine.Options{Embedder: enginetest.NewHashEmbedder("hash-a", 32)})
	r, err := e.SearchDetailed(ctx, engine.SearchRequest{Query: "alpha", Mode: engine.ModeKeyword})
	if err != nil || len(r.Results) == 0 {
		t.Fatalf("keyword search during the backlog: %+v %v", r, err)
	}
	deadline := time.Now().Add(5 * time.Minute) // generous: the machine may be loaded
	for {
		b, err := ops.VectorBacklog(ctx, e, "")
		if err != nil {
			t.Fatal(err)
		}
		if b.Queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker left %d of 300 messages queued", b.Queued)
		}
		time.Sleep(10 * time.Millisecond)
	}
	rep := enginetest.MustConsistent(t, e)
	if rep.Sets[0].Vectors != 300 {
		t.Fatalf("vectors: %+v", rep.Sets[0])
	}
}
