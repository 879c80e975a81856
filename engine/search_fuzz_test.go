package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/fts"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// FuzzSearchPlainTerms holds the keyword search contract: any text searches
// without error, means exactly "any of its plain terms" (the results are the
// union of searching each term alone), and finds a message with that very
// text.
func FuzzSearchPlainTerms(f *testing.F) {
	for _, s := range []string{
		"", "wal", "NOT wal", `"unterminated`, `a OR b AND NOT c`, `NEAR(a b, 3)`, `col:value`, `prefix*`, `^first`,
		`(((`, `)`, `""`, `"" OR ""`, `-x +y`, `{a b}: c`, "emoji 🚀🔥 only", "東京 データベース", "Grüße", "e\u0301cole",
		"\x00nul", "bad \xff utf8", "a\u200bb", "tab\tnew\nline", `\"escaped\"`, "AND", "OR", "NOT", "NEAR", "*", ":", "^",
		"x'y", `x"y`, "x''y", "1.5e10 0x1F -3", "ǅ Ǆ ǆ", "\U000e0041 tag chars", "\u0378 unassigned", "\U0001F600\u200d\U0001F680",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ctx := context.Background()
		e, _ := enginetest.Open(t, engine.Options{})
		corpus(t, e)
		var stored int64
		if res, err := e.WriteNote(ctx, engine.NewNote{Agent: "fuzz", Content: text}); err == nil {
			stored = res.ID
		} else {
			var inv *engine.InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("WriteNote(%q): %v", text, err)
			}
		}
		rs, err := e.Search(ctx, engine.SearchRequest{Query: text, Limit: engine.MaxLimit, MinScore: new(float64)})
		if err != nil {
			t.Fatalf("Search(%q): %v", text, err)
		}
		if strings.TrimSpace(text) == "" {
			return // a filter-only listing, not a keyword search
		}
		got := enginetest.ResultIDs(rs)
		slices.Sort(got)

		var union []int64
		for _, term := range fts.Terms(text) {
			rs, err := e.Search(ctx, engine.SearchRequest{Query: term, Limit: engine.MaxLimit, MinScore: new(float64)})
			if err != nil {
				t.Fatalf("Search(term %q): %v", term, err)
			}
			for _, id := range enginetest.ResultIDs(rs) {
				if !slices.Contains(union, id) {
					union = append(union, id)
				}
			}
		}
		slices.Sort(union)
		if !slices.Equal(got, union) && !(len(got) == 0 && len(union) == 0) {
			t.Fatalf("Search(%q) = %v, but the union of its terms %q is %v", text, got, fts.Terms(text), union)
		}
		if stored != 0 && len(union) > 0 && !slices.Contains(got, stored) {
			t.Fatalf("Search(%q) = %v does not find the message %d with that text", text, got, stored)
		}
	})
}
