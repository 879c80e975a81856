package sqlite_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestKeywordIndexTwoEngines: two engines (as two processes would) share a
// data dir; one writes and deletes, the other searches with its in-memory
// keyword index, which must catch up from SQLite and return exactly what
// FTS5 returns (ids, order and BM25 scores), with and without filters.
func TestKeywordIndexTwoEngines(t *testing.T) {
	ctx := context.Background()
	w, _ := enginetest.Open(t, engine.Options{})
	r, err := enginetest.OpenEngine(ctx, w.Dir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rng := rand.New(rand.NewPCG(7, 7))
	words := strings.Fields("wal checkpoint sqlite index vector query search agent note decision build test error fix deploy cache the a of")
	var stored []int64
	write := func(n int) {
		for range n {
			ws := make([]string, 3+rng.IntN(20))
			for i := range ws {
				ws[i] = words[min(rng.IntN(len(words)), rng.IntN(len(words)))]
			}
			id := enginetest.MustNote(t, w, engine.NewNote{Agent: fmt.Sprintf("a%d", rng.IntN(3)), Content: strings.Join(ws, " ") + fmt.Sprintf(" #%d", len(stored))})
			stored = append(stored, id)
		}
	}
	write(200)
	if err := enginetest.StoreOf(r).SetKeywordIndex(true); err != nil {
		t.Fatal(err)
	}
	filters := []engine.Filter{{}, {SenderIDs: []string{"a1"}}, {ExcludeSender: "a0", MinConfidence: 0.1}}
	compare := func(stage string) {
		t.Helper()
		for _, q := range []string{"wal", "checkpoint sqlite", "the error", "a of the", "fix build deploy cache", "nothing"} {
			for _, f := range filters {
				req := engine.SearchRequest{Query: q, Filter: f, Mode: engine.ModeKeyword, Limit: 50}
				if err := enginetest.StoreOf(r).SetKeywordIndex(false); err != nil {
					t.Fatal(err)
				}
				want, err := r.Search(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if err := enginetest.StoreOf(r).SetKeywordIndex(true); err != nil {
					t.Fatal(err)
				}
				got, err := r.Search(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("%s %q %+v: %d results, FTS5 %d", stage, q, f, len(got), len(want))
				}
				for i := range got {
					g, x := got[i], want[i]
					if g.Message.ID != x.Message.ID || math.Abs(g.KeywordScore-x.KeywordScore) > 1e-12*math.Abs(x.KeywordScore) || (g.Snippet == "") != (x.Snippet == "") {
						t.Fatalf("%s %q %+v result %d: got %d (%v, %q), FTS5 %d (%v, %q)", stage, q, f, i, g.Message.ID, g.KeywordScore, g.Snippet, x.Message.ID, x.KeywordScore, x.Snippet)
					}
				}
			}
		}
	}
	compare("built")
	write(150)
	compare("after writes")
	for range 40 {
		id := stored[rng.IntN(len(stored))]
		if err := w.DeleteMessage(ctx, id); err != nil && !strings.Contains(err.Error(), "not found") {
			t.Fatal(err)
		}
	}
	compare("after deletes")
	write(50)
	compare("after more writes")
	// Past 1,000 messages FTS5's path drops the frequent terms ("wal",
	// "the", ...); the in-memory index drops the same ones.
	write(800)
	compare("past the frequent-term threshold")
}
