package fts_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/fts"
	"github.com/cairn-dev/cairn/fts/ftssql"
)

var seed = flag.Uint64("seed", 0, "seed for randomized tests (0: time-based)")

func testSeed(t *testing.T) uint64 {
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -seed %d)", s, s)
	return s
}

// oracleWords mixes inflected English words (so the stemmer merges some),
// numbers, mixed case and a few non-ASCII words.
var oracleWords = strings.Fields(`connect connected connecting connection connections relate related relational
run running runner runs cat cats dog dogs bark barking barked agree agreed agreement happy happiness
sky skies generalization generalizations generous oscillator database databases index indexing indexed
query queries search searching searched fast faster fastest slow vector vectors embedding embeddings
Go go golang SQLite sqlite FTS5 bm25 the a an of and or not near to in is it be 42 2026 v1 x86 café Straße
naïve 東京 données résumé über ÜBER error errors fail failed failing test tests tested testing`)

type oracleDB struct {
	db
	ix   *fts.Index
	next int64
}

// addDocs inserts n random documents with Zipf-distributed words.
func (o *oracleDB) addDocs(t *testing.T, r *rand.Rand, n int) {
	t.Helper()
	ctx := context.Background()
	tx, err := o.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	zipf := rand.NewZipf(r, 1.2, 1, uint64(len(oracleWords)-1))
	for range n {
		o.next++
		var ws []string
		switch r.IntN(20) {
		case 0: // empty or separators only
			ws = []string{"—", "!!"}
		default:
			for range 1 + r.IntN(40) {
				ws = append(ws, oracleWords[zipf.Uint64()])
			}
		}
		body := strings.Join(ws, []string{" ", ", ", ". ", " - "}[r.IntN(4)])
		tag := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}[r.IntN(10)]
		if _, err := tx.ExecContext(ctx, "INSERT INTO docs (id, body, tag) VALUES (?, ?, ?)", o.next, body, tag); err != nil {
			t.Fatal(err)
		}
		if err := o.t.Insert(ctx, ftssql.Of(tx), o.next, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func (o *oracleDB) deleteSome(t *testing.T, r *rand.Rand, n int) {
	t.Helper()
	ctx := context.Background()
	tx, err := o.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for range n {
		id := 1 + r.Int64N(o.next)
		var body string
		if err := tx.QueryRowContext(ctx, "SELECT body FROM docs WHERE id = ?", id).Scan(&body); err != nil {
			continue
		}
		if err := o.t.Delete(ctx, ftssql.Of(tx), id, body); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM docs WHERE id = ?", id); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestIndexMatchesFTS5 is the oracle test: on a varied corpus, with
// additions and deletions between searches, the in-memory index returns
// exactly Table.Search's hits (same ids, order and scores) for random
// queries, limits and filters of every selectivity.
func TestIndexMatchesFTS5(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 1))
	ctx := context.Background()
	o := &oracleDB{db: openDB(t)}
	if _, err := o.ExecContext(ctx, o.t.VocabSQL()); err != nil {
		t.Fatal(err)
	}
	o.ix = o.t.NewIndex()
	o.addDocs(t, r, 1000) // from the start enough documents for PruneFrequent to act
	if _, ok, err := o.ix.Search(ctx, ftssql.Of(o), fts.Request{Query: fts.ParseQuery("cat")}); ok || err != nil {
		t.Fatalf("unbuilt index answered: %v %v", ok, err)
	}
	if err := o.ix.Build(ctx, ftssql.Of(o)); err != nil {
		t.Fatal(err)
	}
	filters := []struct {
		sql  string
		args []any
	}{ // all but the "recent ones" filter depend on the row only (cacheable)
		{"", nil},
		{"c.tag = ?", []any{"a"}},                       // 10%
		{"c.tag <> ?", []any{"a"}},                      // 90%
		{"c.tag IN (?, ?, ?)", []any{"b", "c", "d"}},    // 30%
		{"c.tag = ? AND c.id % 7 = 0", []any{"e"}},      // ~1.4%
		{"c.id > (SELECT max(id) FROM docs) - 40", nil}, // recent ones
		{"c.tag = ?", []any{"zzz"}},                     // nothing
	}
	rounds, queries := 8, 60
	if testing.Short() {
		rounds, queries = 3, 30
	}
	answered, fellBack, prunedQueries := 0, 0, 0
	for round := range rounds {
		n := 50 + r.IntN(400)
		if round == rounds-1 && o.next+int64(n) < fts.PruneMinDocs+200 {
			// The pruned comparison needs a table big enough to prune.
			n = int(fts.PruneMinDocs + 200 - o.next)
		}
		o.addDocs(t, r, n)
		if round%2 == 1 {
			o.deleteSome(t, r, 1+r.IntN(30))
		}
		for qi := range queries {
			var qs []string
			if qi == 0 {
				// The most frequent word (Zipf's first) sits in nearly
				// every document: a query with it always has a term to prune.
				qs = append(qs, oracleWords[0])
			}
			for range 1 + r.IntN(4) {
				w := oracleWords[r.IntN(len(oracleWords))]
				if r.IntN(3) == 0 {
					w = strings.ToUpper(w)
				}
				qs = append(qs, w)
			}
			if r.IntN(10) == 0 {
				qs = append(qs, "nosuchword")
			}
			f := filters[r.IntN(len(filters))]
			req := fts.Request{Query: fts.ParseQuery(strings.Join(qs, []string{" ", " OR ", `" `, ", "}[r.IntN(4)])), Filter: f.sql, Args: f.args, Limit: []int{1, 5, 20, 100}[r.IntN(4)]}
			req.CacheFilter = !strings.Contains(f.sql, "max(id)") && r.IntN(2) == 0
			want, err := o.t.Search(ctx, ftssql.Of(o), req)
			if err != nil {
				t.Fatal(err)
			}
			got, ok, err := o.ix.Search(ctx, ftssql.Of(o), req)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				fellBack++
				continue
			}
			answered++
			if msg := compareHits(got, want); msg != "" {
				t.Fatalf("round %d, %q filter %q %v limit %d: %s", round, req.Query, req.Filter, req.Args, req.Limit, msg)
			}
			// Without the frequent terms: the same query and hits as
			// FTS5's path (PruneFrequent, then Search).
			pruned, err := o.t.PruneFrequent(ctx, ftssql.Of(o), req.Query)
			if err != nil {
				t.Fatal(err)
			}
			if pruned.String() != req.Query.String() {
				prunedQueries++
			}
			preq := req
			preq.Query = pruned
			want, err = o.t.Search(ctx, ftssql.Of(o), preq)
			if err != nil {
				t.Fatal(err)
			}
			got, ranked, ok, err := o.ix.SearchPruned(ctx, ftssql.Of(o), req)
			if err != nil || !ok {
				t.Fatalf("SearchPruned: %v %v", ok, err)
			}
			if ranked.String() != pruned.String() {
				t.Fatalf("round %d, %q: index pruned to %q, FTS5 to %q", round, req.Query, ranked, pruned)
			}
			if msg := compareHits(got, want); msg != "" {
				t.Fatalf("round %d, %q pruned to %q, filter %q %v limit %d: %s", round, req.Query, pruned, req.Filter, req.Args, req.Limit, msg)
			}
		}
	}
	if err := o.ix.Err(); err != nil {
		t.Fatal(err)
	}
	if answered < fellBack*2 {
		t.Fatalf("the index answered %d queries and fell back on %d", answered, fellBack)
	}
	if prunedQueries == 0 {
		t.Fatalf("no query had a frequent term to prune: the pruned comparison tested nothing")
	}
	t.Logf("%d queries answered from memory, %d fell back (terms FTS5 splits); %+v", answered, fellBack, o.ix.Stats())
}

func compareHits(got, want []fts.Hit) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d hits, FTS5 %d\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.RowID != w.RowID || math.Abs(g.Score-w.Score) > 1e-12*math.Abs(w.Score) {
			return fmt.Sprintf("hit %d: got %d (%.17g), FTS5 %d (%.17g)", i, g.RowID, g.Score, w.RowID, w.Score)
		}
		if (g.Snippet == "") != (w.Snippet == "") || !strings.Contains(g.Snippet, "**") {
			return fmt.Sprintf("hit %d snippet %q, FTS5 %q", i, g.Snippet, w.Snippet)
		}
	}
	return ""
}

// FuzzIndexMatchesFTS5: for any stored text and any query, the in-memory
// index either declines (ok false: the query or the text is outside what
// it mirrors exactly, see Index.Search and Index.Err) or returns exactly
// Table.Search's hits.
func FuzzIndexMatchesFTS5(f *testing.F) {
	for _, s := range [][2]string{{"café crème", "cafe"}, {"Straße", "STRASSE straße"}, {"e\u0301cole", "école ecole"}, {"a\u200bb", "a b ab"},
		{"𝐀𝐁 bold", "𝐀𝐁"}, {"東京タワー", "東京"}, {"x²y ½", "x²y"}, {"running runs ran", "run"}, {"\xff\xfe bad utf8", "bad"}, {"ǅ ǆ Ǆ", "ǆ"},
		{"İstanbul ıi", "istanbul"}, {"ﬁle ﬂow", "file"}, {"", "the"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, text, query string) {
		ctx := context.Background()
		d := openDB(t)
		d.add(t, 1, "plain words here and NOT there, running cafe", "a")
		d.add(t, 2, "東京 🚀 emoji café", "b")
		d.add(t, 3, text, "a")
		ix := d.t.NewIndex()
		if err := ix.Build(ctx, ftssql.Of(d)); err != nil {
			t.Fatal(err)
		}
		d.add(t, 4, text+" "+query, "b")
		for _, req := range []fts.Request{{Query: fts.ParseQuery(query), Limit: 10}, {Query: fts.ParseQuery(query), Filter: "c.tag = ?", Args: []any{"a"}, Limit: 1}} {
			want, err := d.t.Search(ctx, ftssql.Of(d), req)
			if err != nil {
				t.Fatal(err)
			}
			got, ok, err := ix.Search(ctx, ftssql.Of(d), req)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				continue
			}
			if msg := compareHits(got, want); msg != "" {
				t.Fatalf("text %q query %q filter %q: %s", text, query, req.Filter, msg)
			}
		}
	})
}
