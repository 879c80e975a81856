package fts_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/fts"
	"github.com/cairn-dev/cairn/fts/ftssql"
)

// TestPruneFrequent: on a table of 1,200 documents, a term found in more
// than half of them is dropped while another term remains (one in exactly
// half stays); when every term is frequent the rarest stays; one-term
// queries and small tables are left alone. DocCount reads FTS5's totals.
func TestPruneFrequent(t *testing.T) {
	ctx := context.Background()
	d := openDB(t)
	if _, err := d.ExecContext(ctx, d.t.VocabSQL()); err != nil {
		t.Fatal(err)
	}
	prune := func(text string) []string {
		t.Helper()
		q, err := d.t.PruneFrequent(ctx, ftssql.Of(d), fts.ParseQuery(text))
		if err != nil {
			t.Fatal(err)
		}
		return q.Terms()
	}
	addRange := func(from, to int) {
		t.Helper()
		tx, err := d.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		for i := from; i < to; i++ {
			body := fmt.Sprintf("common doc%d", i)
			if i%2 == 0 {
				body += " many"
			}
			if i%12 == 0 {
				body += " some"
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO docs (id, body) VALUES (?, ?)", i+1, body); err != nil {
				t.Fatal(err)
			}
			if err := d.t.Insert(ctx, ftssql.Of(tx), int64(i+1), body); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	addRange(0, 999)
	if got := prune("common doc7"); !slices.Equal(got, []string{"common", "doc7"}) {
		t.Errorf("999 documents: %q, want nothing pruned", got)
	}
	addRange(999, 1200)
	if n, err := d.t.DocCount(ctx, ftssql.Of(d)); err != nil || n != 1200 {
		t.Fatalf("DocCount = %d, %v", n, err)
	}
	for _, c := range []struct {
		text string
		want []string
	}{
		{"common doc7", []string{"doc7"}},
		{"Common", []string{"common"}},
		{"doc7 nosuchword common", []string{"doc7", "nosuchword"}},
		{"common some", []string{"some"}},
		{"some common some", []string{"some"}},
		{"common many", []string{"many"}},
		{"many common", []string{"many"}},
	} {
		if got := prune(c.text); !slices.Equal(got, c.want) {
			t.Errorf("PruneFrequent(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	// A pruned query still finds and marks what its terms match.
	q, err := d.t.PruneFrequent(ctx, ftssql.Of(d), fts.ParseQuery("common doc7"))
	if err != nil {
		t.Fatal(err)
	}
	hs, err := d.t.Search(ctx, ftssql.Of(d), fts.Request{Query: q})
	if err != nil || len(hs) != 1 || hs[0].RowID != 8 || hs[0].Snippet != "common **doc7**" {
		t.Fatalf("search with the pruned query: %+v %v", hs, err)
	}
}
