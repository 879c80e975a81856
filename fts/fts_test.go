package fts_test

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/fts"
	"github.com/cairn-dev/cairn/fts/ftssql"
	_ "modernc.org/sqlite" // the tests' driver; fts itself imports none
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files in testdata/")

// TestMatchGolden holds the query building on the cases in
// testdata/match.txt: each input line "> TEXT" (Go-quoted) is followed by
// its Match output. Run with -rewrite to regenerate.
func TestMatchGolden(t *testing.T) {
	path := filepath.Join("testdata", "match.txt")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if !strings.HasPrefix(line, "> ") {
			if strings.HasPrefix(line, "#") || line == "" {
				out.WriteString(line + "\n")
			}
			continue
		}
		var text string
		if _, err := fmt.Sscanf(line[2:], "%q", &text); err != nil {
			t.Fatalf("%s:%d: input must be a Go-quoted string: %v", path, i+1, err)
		}
		got := fts.Match(text)
		out.WriteString(line + "\n" + got + "\n")
		want := ""
		if i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "> ") {
			want = lines[i+1]
		}
		if !*rewrite && got != want {
			t.Errorf("%s:%d: Match(%q)\n got %s\nwant %s", path, i+1, text, got, want)
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTermsLimits(t *testing.T) {
	var words []string
	for i := range fts.MaxTerms + 10 {
		words = append(words, fmt.Sprintf("w%d", i))
	}
	if got := fts.Terms(strings.Join(words, " ")); len(got) != fts.MaxTerms || got[0] != "w0" {
		t.Fatalf("got %d terms starting %q, want %d starting w0", len(got), got[0], fts.MaxTerms)
	}
	long := strings.Repeat("é", 300)
	got := fts.Terms(long)
	if len(got) != 1 || len(got[0]) > 256 || !strings.HasPrefix(long, got[0]) {
		t.Fatalf("long term: got %d bytes", len(got[0]))
	}
}

type db struct {
	*sql.DB
	t *fts.Table
}

func openDB(t testing.TB) db {
	t.Helper()
	d, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "fts.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	d.SetMaxOpenConns(1)
	tab, err := fts.New("docs_fts", "docs", "body", "id")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := d.ExecContext(ctx, "CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT NOT NULL, tag TEXT NOT NULL DEFAULT '')"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecContext(ctx, tab.CreateSQL()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tab.Check(context.Background(), ftssql.Of(d)); err != nil {
			t.Errorf("invariant: %v", err)
		}
	})
	return db{d, tab}
}

func (d db) add(t testing.TB, id int64, body, tag string) {
	t.Helper()
	ctx := context.Background()
	tx, err := d.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "INSERT INTO docs (id, body, tag) VALUES (?, ?, ?)", id, body, tag); err != nil {
		t.Fatal(err)
	}
	if err := d.t.Insert(ctx, ftssql.Of(tx), id, body); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func hitIDs(hs []fts.Hit) []int64 {
	var out []int64
	for _, h := range hs {
		out = append(out, h.RowID)
	}
	return out
}

func TestTableSearch(t *testing.T) {
	ctx := context.Background()
	d := openDB(t)
	d.add(t, 1, "the cat sat on the mat", "a")
	d.add(t, 2, "cats and dogs and cats", "b")
	d.add(t, 3, "a dog barked at the postman", "a")
	d.add(t, 4, "nothing to see", "b")

	hs, err := d.t.Search(ctx, ftssql.Of(d), fts.Request{Query: fts.ParseQuery("cat")})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := hitIDs(hs), []int64{2, 1}; !slices.Equal(got, want) {
		t.Fatalf("cat: got %v, want %v", got, want)
	}
	if hs[0].Snippet != "**cats** and dogs and **cats**" || !(hs[0].Score > hs[1].Score) {
		t.Fatalf("hit: %+v", hs[0])
	}
	hs, err = d.t.Search(ctx, ftssql.Of(d), fts.Request{Query: fts.ParseQuery("dog cat"), Filter: "c.tag = ?", Args: []any{"a"}, MarkStart: "<", MarkEnd: ">", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	got := hitIDs(hs)
	slices.Sort(got)
	if !slices.Equal(got, []int64{1, 3}) {
		t.Fatalf("filtered: got %v", got)
	}
	for _, h := range hs {
		if !strings.Contains(h.Snippet, "<") {
			t.Fatalf("custom marks missing: %q", h.Snippet)
		}
	}
	if hs, err := d.t.Search(ctx, ftssql.Of(d), fts.Request{Query: fts.ParseQuery("🚀 ...")}); err != nil || hs != nil {
		t.Fatalf("no terms: %v %v", hs, err)
	}

	// Delete keeps the index in step.
	tx, _ := d.BeginTx(ctx, nil)
	if err := d.t.Delete(ctx, ftssql.Of(tx), 2, "cats and dogs and cats"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM docs WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	hs, _ = d.t.Search(ctx, ftssql.Of(d), fts.Request{Query: fts.ParseQuery("cat")})
	if got := hitIDs(hs); !slices.Equal(got, []int64{1}) {
		t.Fatalf("after delete: %v", got)
	}
	if err := d.t.Rebuild(ctx, ftssql.Of(d)); err != nil {
		t.Fatal(err)
	}
	if err := d.t.Optimize(ctx, ftssql.Of(d)); err != nil {
		t.Fatal(err)
	}
}

func TestCheckFindsDrift(t *testing.T) {
	ctx := context.Background()
	d := openDB(t)
	d.add(t, 1, "alpha beta", "")
	// A content row the index does not know about.
	if _, err := d.ExecContext(ctx, "INSERT INTO docs (id, body) VALUES (2, 'gamma')"); err != nil {
		t.Fatal(err)
	}
	if err := d.t.Check(ctx, ftssql.Of(d)); err == nil {
		t.Fatal("Check did not notice a missing index entry")
	}
	if err := d.t.Rebuild(ctx, ftssql.Of(d)); err != nil {
		t.Fatal(err)
	}
	if err := d.t.Check(ctx, ftssql.Of(d)); err != nil {
		t.Fatalf("after rebuild: %v", err)
	}
}

func TestNewRejectsBadNames(t *testing.T) {
	for _, n := range [][4]string{{"a b", "c", "d", "e"}, {"a", "c;drop", "d", "e"}, {"a", "c", "", "e"}, {"a", "c", "d", "1e"}} {
		if _, err := fts.New(n[0], n[1], n[2], n[3]); !errors.Is(err, fts.ErrInvalidName) {
			t.Errorf("New(%q): got %v", n, err)
		}
	}
}

// FuzzMatch: for any text, the MATCH expression is valid FTS5, means "any of
// the plain terms" (same hits as the union over terms), and finds a document
// holding the text itself.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{"", "a", `"`, `""`, `a"b`, "NOT", "a NOT b", "NEAR(a b)", "x*", "^x", "c:x", "(", ")", "🚀", "東京",
		"\x00", "\xff\xfe", "e\u0301", "\u200b", "AND OR NOT", `'`, `\`, "x OR", "- + ~ @ # $ % &", "\U000e0041\U000e0042", "\u0378\u0379"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ctx := context.Background()
		d := openDB(t)
		d.add(t, 1, "plain words here and NOT there", "")
		d.add(t, 2, "東京 🚀 emoji", "")
		d.add(t, 3, text, "")
		hs, err := d.t.Search(ctx, ftssql.Of(d), fts.Request{Query: fts.ParseQuery(text), Limit: 100})
		if err != nil {
			t.Fatalf("Search(%q) [match %s]: %v", text, fts.Match(text), err)
		}
		got := hitIDs(hs)
		slices.Sort(got)
		var union []int64
		for _, term := range fts.Terms(text) {
			hs, err := d.t.Search(ctx, ftssql.Of(d), fts.Request{Query: fts.ParseQuery(term), Limit: 100})
			if err != nil {
				t.Fatalf("Search(term %q): %v", term, err)
			}
			for _, id := range hitIDs(hs) {
				if !slices.Contains(union, id) {
					union = append(union, id)
				}
			}
		}
		slices.Sort(union)
		if !slices.Equal(got, union) {
			t.Fatalf("Search(%q) = %v, union of terms %q = %v", text, got, fts.Terms(text), union)
		}
		if len(union) > 0 && !slices.Contains(got, 3) {
			t.Fatalf("Search(%q) = %v misses the document with that text", text, got)
		}
	})
}

// DropHeld deletes exactly the stems DocTerms finds in a text: the oracle
// is DocTerms itself, over every term of a set of texts.
func TestDropHeldAgreesWithDocTerms(t *testing.T) {
	texts := []string{
		"Invoices are immutable; retries happen nightly",
		"ies sses y Ünïcode naïve café CAFÉ résumé x1 2024-05-01",
		"The refund worker retried failed refunds three times",
		"",
	}
	var vocab []string
	for _, text := range texts {
		terms, _, _ := fts.DocTerms(text)
		vocab = append(vocab, terms...)
	}
	vocab = append(vocab, "zebra", "invoic", "y")
	for _, text := range texts {
		held, _, _ := fts.DocTerms(text)
		in := map[string]bool{}
		for _, s := range held {
			in[s] = true
		}
		stems := map[string]bool{}
		for _, s := range vocab {
			stems[s] = true
		}
		fts.DropHeld(text, stems)
		for _, s := range vocab {
			if stems[s] == in[s] {
				t.Errorf("%q: stem %q left %v, held %v", text, s, stems[s], in[s])
			}
		}
	}
}
