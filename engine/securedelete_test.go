package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestSecureDeleteKeepsIndexSound: keyword searches (which start the
// in-memory index) interleaved with deletes under FTS5 secure-delete and
// further writes leave an index that passes FTS5's integrity check and
// still finds every remaining message, in a fresh process's view.
func TestSecureDeleteKeepsIndexSound(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := enginetest.OpenEngine(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	req := engine.SearchRequest{Query: "retry backoff", Mode: engine.ModeKeyword, Limit: 100}
	kept := 0
	for i := range 40 {
		id := enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: fmt.Sprintf("retry loop backoff note %d", i)})
		if _, err := e.Search(ctx, req); err != nil {
			t.Fatal(err)
		}
		if i%3 == 1 {
			if err := e.DeleteMessage(ctx, id); err != nil {
				t.Fatal(err)
			}
			continue
		}
		kept++
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e2 := enginetest.OpenDir(t, dir, engine.Options{})
	if err := ops.Check(ctx, e2); err != nil {
		t.Fatalf("after searches and secure deletes: %v", err)
	}
	got, err := e2.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != kept {
		t.Errorf("keyword search finds %d messages, want the %d kept", len(got), kept)
	}
}
