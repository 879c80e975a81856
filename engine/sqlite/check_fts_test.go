package sqlite_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestCheckAfterSecureDelete: a delete that empties an FTS5 segment, made
// after reader connections cached the index structure (a keyword search
// before the in-memory index is built runs on FTS5 through them), does not
// make Check report corruption in the same process.
func TestCheckAfterSecureDelete(t *testing.T) {
	ctx := context.Background()
	for round := range 40 {
		e, err := enginetest.OpenEngine(ctx, t.TempDir(), engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for i := range 3 {
			ids = append(ids, enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: fmt.Sprintf("retry loop backoff note %d", i)}))
		}
		req := engine.SearchRequest{Query: "retry", Mode: engine.ModeKeyword}
		if _, err := e.Search(ctx, req); err != nil {
			t.Fatal(err)
		}
		// The search above ran on FTS5 through a reader and started the
		// in-memory index in the background; wait until it holds the notes.
		for enginetest.StoreOf(e).KeywordIndexStats().Docs < 3 {
			runtime.Gosched()
		}
		if err := e.DeleteMessage(ctx, ids[1]); err != nil {
			t.Fatal(err)
		}
		if err := ops.Check(ctx, e); err != nil {
			t.Errorf("round %d: check after a secure delete: %v", round, err)
		}
		e.Close()
	}
}
