package engine_test

import (
	"context"
	"testing"

	"github.com/cairn-dev/cairn/engine"
)

// TestSearchStatsPersist: searches of one process are counted in the
// stats another process reads after the first closes, and the average is
// positive.
func TestSearchStatsPersist(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := engine.Open(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.WriteNote(ctx, engine.NewNote{Agent: "a", Content: "count my searches"}); err != nil {
		t.Fatal(err)
	}
	for range 70 { // past one background flush
		if _, err := e.Search(ctx, engine.SearchRequest{Query: "searches"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := engine.Open(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Search(ctx, engine.SearchRequest{Query: "count"}); err != nil {
		t.Fatal(err)
	}
	st, err := r.StoreStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Search.Searches != 71 || st.Search.AvgMs <= 0 {
		t.Errorf("search stats = %+v, want 71 searches and a positive average", st.Search)
	}
}
