package postgres_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/postgres"
	"github.com/cairn-dev/cairn/fts"
	"github.com/cairn-dev/cairn/internal/pgtest"
	"github.com/cairn-dev/cairn/vecstore/where"
)

var seed = flag.Uint64("seed", 0, "seed of randomized tests (0: time-based)")

func testRand(t *testing.T) *rand.Rand {
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("-seed %d", s)
	return rand.New(rand.NewPCG(s, s))
}

// The keyword search over keyword_terms and keyword_postings returns what
// counting and scoring from the messages themselves returns (ids, order,
// scores to 1e-9), for frequent and rare terms, repeated terms, filters of
// every selectivity (ids probed or joined) and depths from 1 to more than
// the matches; also after deletes, which both tables follow (checked
// against a recount).
func TestKeywordSearchFromPostings(t *testing.T) {
	ctx := context.Background()
	r := testRand(t)
	dsn := pgtest.Database(t)
	st, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.OpenBackend(ctx, st, postgres.Kind, "", engine.Options{Now: clock(), NoVectorWorker: true})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	defer e.Close()
	// Word k<i> is drawn from a Zipf law: a few words are in most
	// messages (their idf is floored), most are rare.
	zipf := rand.NewZipf(r, 1.1, 2, 400)
	word := func() string { return fmt.Sprintf("k%d", zipf.Uint64()) }
	var ids []int64
	for batch := 0; batch < 15; batch++ {
		var in []engine.NewMessage
		for i := 0; i < 100; i++ {
			var ws []string
			for range 2 + r.IntN(30) {
				ws = append(ws, word())
			}
			if r.IntN(10) == 0 { // a high frequency of one word
				ws = append(ws, strings.Repeat(word()+" ", 5+r.IntN(10)))
			}
			typ := engine.TypeMessage
			if r.IntN(2) == 0 {
				typ = engine.TypeDecision
			}
			in = append(in, engine.NewMessage{Channel: fmt.Sprintf("c-%d", r.IntN(20)), Sender: "s", Type: typ, Content: strings.Join(ws, " ")})
		}
		in = append(in, in[0]) // a repeat: stored once, counted once
		rs, err := e.StoreMessages(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, res := range rs[:len(rs)-1] {
			if res.Created { // two random texts in one channel may be equal: one message
				ids = append(ids, res.ID)
			}
		}
	}
	str := func(key, v string) *where.Expr { return &where.Expr{Op: where.OpEq, Key: key, Value: where.String(v)} }
	filters := []*where.Expr{
		nil,
		str("channel_id", "c-3"),                 // 5%
		str("message_type", engine.TypeDecision), // 50%
		{Op: where.OpOr, Children: []*where.Expr{str("channel_id", "c-1"), str("channel_id", "c-2")}}, // 10%
		{Op: where.OpAnd, Children: []*where.Expr{str("channel_id", "c-4"), str("message_type", engine.TypeMessage)}},
	}
	queries := 40
	if testing.Short() { // each query is 60 PostgreSQL reads; make test-long asks all 40
		queries = 12
	}
	compare := func(round string) {
		t.Helper()
		for range queries {
			var ws []string
			for range 1 + r.IntN(8) {
				if r.IntN(2) == 0 {
					ws = append(ws, word())
				} else {
					ws = append(ws, fmt.Sprintf("k%d", r.IntN(420))) // rare, or in no message
				}
			}
			if r.IntN(5) == 0 {
				ws = append(ws, ws[0])
			}
			terms, _ := fts.ParseQuery(strings.Join(ws, " ")).Stems()
			for fi, f := range filters {
				for _, depth := range []int{1, 10, 100, 2000} {
					got, err := st.KeywordTerms(ctx, terms, f, depth)
					if err != nil {
						t.Fatal(err)
					}
					joined, err := st.KeywordJoined(ctx, terms, f, depth)
					if err != nil {
						t.Fatal(err)
					}
					want, err := st.KeywordFromMessages(ctx, terms, f, depth)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, joined) {
						t.Fatalf("%s: terms %q, filter %d, depth %d: probed by id %v, joined %v", round, terms, fi, depth, got, joined)
					}
					if !sameHits(got, want) {
						t.Fatalf("%s: terms %q, filter %d, depth %d:\n got %v\nwant %v", round, terms, fi, depth, got, want)
					}
				}
			}
		}
		checkKeywordTerms(t, dsn)
	}
	compare("after writes")
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for _, id := range ids[:300] {
		if err := e.DeleteMessage(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	compare("after deletes")
}

// sameHits reports whether got and want hold the same hits in the same
// order, scores equal to 1e-9 (summation order differs), where hits whose
// scores are that close may come in either order.
func sameHits(got, want []engine.ScoredID) bool {
	if len(got) != len(want) {
		return false
	}
	score := map[int64]float64{}
	for _, h := range want {
		score[h.ID] = h.Score
	}
	for i := range got {
		if math.Abs(got[i].Score-want[i].Score) > 1e-9 {
			return false
		}
		if s, ok := score[got[i].ID]; got[i].ID != want[i].ID && (!ok || math.Abs(s-want[i].Score) > 1e-9) {
			return false
		}
	}
	return true
}

// checkKeywordTerms checks keyword_terms and keyword_postings against a
// recount of the messages.
func checkKeywordTerms(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var bad int
	var example string
	err = conn.QueryRow(ctx, `WITH actual AS (
			SELECT u.term, count(*) AS df FROM messages m CROSS JOIN LATERAL unnest(m.terms) AS u(term) GROUP BY u.term),
		kept AS (SELECT term, sum(df) AS df FROM keyword_terms GROUP BY term)
		SELECT count(*), coalesce(min(coalesce(a.term, k.term)), '') FROM actual a FULL JOIN kept k ON k.term = a.term
		WHERE coalesce(a.df, 0) <> coalesce(k.df, 0)`).Scan(&bad, &example)
	if err != nil {
		t.Fatal(err)
	}
	if bad > 0 {
		t.Fatalf("keyword_terms disagrees with the messages on %d terms (first %q)", bad, example)
	}
	err = conn.QueryRow(ctx, `WITH actual AS (
			SELECT u.term, m.id AS message_id, u.tf, m.doc_len FROM messages m CROSS JOIN LATERAL unnest(m.terms, m.tfs) AS u(term, tf))
		SELECT count(*) FROM actual a FULL JOIN keyword_postings p USING (term, message_id)
		WHERE a.tf IS DISTINCT FROM p.tf OR a.doc_len IS DISTINCT FROM p.doc_len`).Scan(&bad)
	if err != nil {
		t.Fatal(err)
	}
	if bad > 0 {
		t.Fatalf("keyword_postings disagrees with the messages on %d postings", bad)
	}
}
