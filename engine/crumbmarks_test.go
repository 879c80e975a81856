package engine_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestSearchBreadcrumbsValid: the filter keeps the notes checked at HEAD
// with every breadcrumb valid, on both sides of a search and in listings,
// and follows HEAD and refreshes (the keyword side must not cache it).
func TestSearchBreadcrumbsValid(t *testing.T) {
	ctx := context.Background()
	e, h, ids := enginetest.MarksFixture(t)
	put := func(head string, states ...engine.MarkState) {
		t.Helper()
		marks := map[int64][]engine.BreadcrumbMark{}
		for i, s := range states {
			marks[ids[i]] = enginetest.Mark(s, "x")
		}
		if err := ops.PutBreadcrumbMarks(ctx, e, enginetest.Repo1, head, marks); err != nil {
			t.Fatal(err)
		}
	}
	got := func(mode string) []int64 {
		t.Helper()
		query := "retry backoff"
		if mode == "" {
			query = ""
		}
		out := enginetest.ResultIDs(enginetest.Search(t, e, engine.SearchRequest{Query: query, Mode: engine.SearchMode(mode), Filter: engine.Filter{BreadcrumbsValid: true}}))
		slices.Sort(out)
		return out
	}
	modes := []string{"keyword", "semantic", "hybrid", ""}
	for _, mode := range modes {
		if g := got(mode); len(g) != 0 {
			t.Fatalf("%q before any check: %v", mode, g)
		}
	}
	put(enginetest.Head1, engine.MarkValid, engine.MarkMoved, engine.MarkValid)
	for _, mode := range modes {
		if g := got(mode); !slices.Equal(g, []int64{ids[0], ids[2]}) {
			t.Fatalf("%q: %v, want %v", mode, g, []int64{ids[0], ids[2]})
		}
	}
	h.Set(enginetest.Head2)
	for _, mode := range modes {
		if g := got(mode); len(g) != 0 {
			t.Fatalf("%q after HEAD moved, before a refresh: %v", mode, g)
		}
	}
	put(enginetest.Head2, engine.MarkGone, engine.MarkValid, engine.MarkForm)
	for _, mode := range modes {
		if g := got(mode); !slices.Equal(g, []int64{ids[1], ids[2]}) {
			t.Fatalf("%q after the refresh: %v, want %v", mode, g, []int64{ids[1], ids[2]})
		}
	}

	// A repository not reachable from this machine keeps its last marks.
	h.Set("")
	for _, mode := range modes {
		if g := got(mode); !slices.Equal(g, []int64{ids[1], ids[2]}) {
			t.Fatalf("%q with the repository unreachable: %v, want the last marks' %v", mode, g, []int64{ids[1], ids[2]})
		}
	}
}

// TestSearchDemoteStale: demote_stale multiplies the final score of notes
// whose breadcrumbs changed or are gone at HEAD (not moved ones), enough
// to reorder; out-of-range factors are refused.
func TestSearchDemoteStale(t *testing.T) {
	ctx := context.Background()
	e, h, ids := enginetest.MarksFixture(t)
	if err := ops.PutBreadcrumbMarks(ctx, e, enginetest.Repo1, enginetest.Head1, map[int64][]engine.BreadcrumbMark{
		ids[0]: enginetest.Mark(engine.MarkChanged, "x"), ids[1]: enginetest.Mark(engine.MarkMoved, "x"), ids[2]: enginetest.Mark(engine.MarkGone, "x"),
	}); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"keyword", "semantic", "hybrid"} {
		plain := enginetest.Search(t, e, engine.SearchRequest{Query: "retry loop backoff note", Mode: engine.SearchMode(mode)})
		demoted := enginetest.Search(t, e, engine.SearchRequest{Query: "retry loop backoff note", Mode: engine.SearchMode(mode), Ranking: engine.Ranking{StaleFactor: 0.01}})
		base := map[int64]float64{}
		for _, r := range plain {
			base[r.Message.ID] = r.Score
		}
		sawStale := false
		for i, r := range demoted {
			stale := r.Message.ID == ids[0] || r.Message.ID == ids[2]
			want := base[r.Message.ID]
			if stale {
				want *= 0.01
			}
			if r.Scores.Demoted != stale || r.Score != want {
				t.Fatalf("%s: #%d demoted=%v score %v, want %v (plain %v)", mode, r.Message.ID, r.Scores.Demoted, r.Score, want, base[r.Message.ID])
			}
			// The stale notes come after every other note that scored.
			if stale {
				sawStale = true
			} else if sawStale && r.Score > 0 {
				t.Fatalf("%s: #%d (score %v) at rank %d ranks below a demoted note", mode, r.Message.ID, r.Score, i+1)
			}
		}
	}
	// At another HEAD the cache says nothing: nothing is demoted.
	h.Set(enginetest.Head2)
	for _, r := range enginetest.Search(t, e, engine.SearchRequest{Query: "retry loop backoff note", Mode: engine.ModeKeyword, Ranking: engine.Ranking{StaleFactor: 0.01}}) {
		if r.Scores.Demoted {
			t.Fatalf("demoted by marks of another HEAD: #%d", r.Message.ID)
		}
	}
	for _, f := range []float64{-0.5, 1.5} {
		var inv *engine.InvalidError
		if err := (engine.SearchRequest{Query: "x", Ranking: engine.Ranking{StaleFactor: f}}).Validate(); !errors.As(err, &inv) || inv.Field != "demote_stale" {
			t.Fatalf("demote_stale %v: %v", f, err)
		}
	}
}
