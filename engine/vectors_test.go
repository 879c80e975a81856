package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/enginetest"
	_ "modernc.org/sqlite" // raw access to simulate crashes
)

func TestDualWriteEmbedsEachMessageOnce(t *testing.T) {
	ctx := context.Background()
	emb := enginetest.NewHashEmbedder("hash-a", 32)
	// Off: the near-duplicate check of a live write embeds it once more.
	e := enginetest.OpenDir(t, t.TempDir(), engine.Options{Embedder: emb, NearDuplicateCosine: 2})
	msgs := enginetest.Batch(300, 1)
	res, err := e.StoreMessages(ctx, msgs[:250])
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 250 || !res[0].Created {
		t.Fatalf("results: %d %+v", len(res), res[0])
	}
	for _, m := range msgs[250:] {
		enginetest.MustStore(t, e, m)
	}
	// Idempotent batch: nothing new, nothing queued twice.
	res, err = e.StoreMessages(ctx, msgs[:10])
	if err != nil || res[0].Created {
		t.Fatalf("re-store: %v %+v", err, res)
	}
	enginetest.MustSync(t, e)
	rep := enginetest.MustConsistent(t, e)
	if len(rep.Sets) != 1 || rep.Sets[0].Vectors != 300 || rep.Sets[0].Pending != 0 || rep.Sets[0].State != engine.SetActive || rep.Sets[0].CollectionModel != "hash-a" {
		t.Fatalf("sets: %+v", rep.Sets)
	}
	for _, m := range msgs {
		if n := emb.Embedded(m.Content); n != 1 {
			t.Fatalf("%q embedded %d times", m.Content, n)
		}
	}
	// Semantic search finds a message by its words.
	r, err := e.SearchDetailed(ctx, engine.SearchRequest{Query: msgs[42].Content + " ", Mode: engine.ModeSemantic, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode != engine.ModeSemantic || len(r.Results) == 0 || r.Results[0].Message.Content != msgs[42].Content || r.Results[0].VectorMissing {
		t.Fatalf("semantic: %+v", r)
	}
	if s := r.Results[0].Scores.Similarity; s < 0.999 {
		t.Fatalf("similarity of identical text = %v", s)
	}
}

func TestBatchIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	msgs := enginetest.Batch(5, 2)
	msgs[3].Confidence = enginetest.Ptr(2.0)
	_, err := e.StoreMessages(ctx, msgs)
	var be *engine.BatchError
	var inv *engine.InvalidError
	if !errors.As(err, &be) || be.Index != 3 || !errors.As(err, &inv) || inv.Field != "confidence" {
		t.Fatalf("got %v", err)
	}
	if n := enginetest.CountMessages(t, e); n != 0 {
		t.Fatalf("%d messages written by refused batches", n)
	}
}

func TestKeywordOnlyThenModelAppears(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := enginetest.OpenDir(t, dir, engine.Options{})
	msgs := enginetest.Batch(40, 3)
	if _, err := e.StoreMessages(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	sets, err := ops.VectorSets(ctx, e)
	if err != nil || len(sets) != 0 {
		t.Fatalf("sets without embedder: %v %v", sets, err)
	}
	r, err := e.SearchDetailed(ctx, engine.SearchRequest{Query: "alpha bravo"})
	if err != nil || r.Mode != engine.ModeKeyword || len(r.Notes) == 0 || len(r.Results) == 0 || !r.Results[0].VectorMissing {
		t.Fatalf("hybrid without embedder: %+v %v", r, err)
	}
	if _, err := e.Search(ctx, engine.SearchRequest{Query: "alpha", Mode: engine.ModeSemantic}); !errors.Is(err, engine.ErrEmbedderMismatch) {
		t.Fatalf("semantic without embedder: %v", err)
	}
	e.Close()

	emb := enginetest.NewHashEmbedder("hash-a", 32)
	e = enginetest.OpenDir(t, dir, engine.Options{Embedder: emb})
	sets, err = ops.VectorSets(ctx, e)
	// The background worker may already have embedded some of the 40
	// back-filled messages; mustSync and the consistency check below
	// prove all 40 arrive.
	if err != nil || len(sets) != 1 || sets[0].Pending > 40 || sets[0].State != engine.SetActive {
		t.Fatalf("sets after the model appeared: %+v %v", sets, err)
	}
	enginetest.MustSync(t, e)
	rep := enginetest.MustConsistent(t, e)
	if rep.Sets[0].Vectors != 40 {
		t.Fatalf("vectors: %+v", rep.Sets[0])
	}
	r, err = e.SearchDetailed(ctx, engine.SearchRequest{Query: "alpha bravo"})
	if err != nil || r.Mode != engine.ModeHybrid || r.Model != "hash-a" || len(r.Notes) != 0 || r.Results[0].VectorMissing {
		t.Fatalf("hybrid: %+v %v", r, err)
	}
}

func TestOutboxRepairsCrashes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// A process that commits messages and dies before embedding them: the
	// embedder fails, the process closes.
	broken := enginetest.NewHashEmbedder("hash-a", 32)
	broken.Fail = func(int, int) error { return errors.New("simulated crash before the vector write") }
	e := enginetest.OpenDir(t, dir, engine.Options{Embedder: broken})
	msgs := enginetest.Batch(50, 4)
	if _, err := e.StoreMessages(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	// Reads say the vectors are missing; hybrid still finds by keyword.
	if _, err := e.Search(ctx, engine.SearchRequest{Query: msgs[7].Content, Mode: engine.ModeSemantic}); err == nil {
		t.Fatal("semantic search should fail when the query cannot be embedded")
	}
	r, err := e.SearchDetailed(ctx, engine.SearchRequest{Query: msgs[7].Content})
	if err != nil || r.Mode != engine.ModeKeyword || len(r.Notes) == 0 || len(r.Results) == 0 ||
		r.Results[0].Message.Content != msgs[7].Content || !r.Results[0].VectorMissing {
		t.Fatalf("hybrid with a failing embedder: %+v %v", r, err)
	}
	e.Close()

	emb := enginetest.NewHashEmbedder("hash-a", 32)
	e = enginetest.OpenDir(t, dir, engine.Options{Embedder: emb})
	enginetest.MustSync(t, e)
	enginetest.MustConsistent(t, e)
	e.Close()

	// A crash after the vecstore write but before the outbox rows were
	// removed: put the rows back by hand.
	db, err := sql.Open("sqlite", filepath.Join(dir, sqlite.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO vector_outbox (set_id, message_id) SELECT (SELECT id FROM vector_sets), id FROM messages"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	e = enginetest.OpenDir(t, dir, engine.Options{Embedder: emb})
	sets, _ := ops.VectorSets(ctx, e)
	if sets[0].Pending > 50 { // the worker may already be clearing them
		t.Fatalf("pending after simulated crash: %+v", sets)
	}
	enginetest.MustSync(t, e)
	enginetest.MustConsistent(t, e)
	for _, m := range msgs {
		if n := emb.Embedded(m.Content); n != 1 {
			t.Fatalf("%q embedded %d times", m.Content, n)
		}
	}
}

func TestVectorMissingIsReported(t *testing.T) {
	ctx := context.Background()
	emb := enginetest.NewHashEmbedder("hash-a", 32)
	block := make(chan struct{})
	var once sync.Once
	emb.Fail = func(done, n int) error {
		if n > 1 { // message batches wait; single query texts pass
			once.Do(func() {})
			select {
			case <-block:
			case <-time.After(5 * time.Second):
			}
			return errors.New("held back")
		}
		return nil
	}
	e := enginetest.OpenDir(t, t.TempDir(), engine.Options{Embedder: emb})
	defer close(block)
	msgs := enginetest.Batch(20, 5)
	if _, err := e.StoreMessages(ctx, msgs[:10]); err != nil {
		t.Fatal(err)
	}
	r, err := e.SearchDetailed(ctx, engine.SearchRequest{Query: msgs[3].Content})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, res := range r.Results {
		if res.Message.Content == msgs[3].Content {
			found = true
			if !res.VectorMissing || res.Scores.Keyword == 0 {
				t.Fatalf("unembedded message: %+v", res)
			}
		}
	}
	if !found {
		t.Fatalf("hybrid did not find the unembedded message by keyword: %+v", r)
	}
}

func TestWhereFilterValidation(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	for _, tc := range []struct{ where, field string }{
		{`{"nope": "x"}`, "where"},
		{`{"confidence": "high"}`, "where"},
		{`{"word_count": {"$gt": 2.5}}`, "where"},
		{`{"channel_id": {"$gt": "a"}}`, "where"},
		{`{"$and": 3}`, "where"},
	} {
		_, err := e.Search(ctx, engine.SearchRequest{Query: "x", Filter: engine.Filter{Where: []byte(tc.where)}})
		var inv *engine.InvalidError
		if !errors.As(err, &inv) || inv.Field != tc.field {
			t.Errorf("where %s: got %v", tc.where, err)
		}
	}
	for _, bad := range []engine.SearchRequest{
		{Mode: "fuzzy"}, {Fusion: "sum"}, {Ranking: engine.Ranking{Profile: "fast"}},
		{Ranking: engine.Ranking{Profile: "recent", Recency: 1}}, {Ranking: engine.Ranking{Similarity: -1}},
		{Filter: engine.Filter{ChannelTypes: []string{"dm"}}}, {Filter: engine.Filter{MaxAge: -time.Hour}},
	} {
		var inv *engine.InvalidError
		if _, err := e.Search(ctx, bad); !errors.As(err, &inv) {
			t.Errorf("Search(%+v): got %v, want an InvalidError", bad, err)
		}
	}
}

// TestBatchMatchesSingleWrites: StoreMessages leaves the same channels,
// agents and messages as StoreMessage one by one.
func TestBatchMatchesSingleWrites(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	msgs := enginetest.Batch(60, 7)
	for i := range msgs {
		if i%4 == 0 {
			msgs[i].Project = "cairn"
			msgs[i].Channel = engine.ProjectChannelID("cairn", "decisions")
		}
	}
	msgs = append(msgs, msgs[3], msgs[10]) // duplicates inside the batch
	a := enginetest.OpenDir(t, t.TempDir(), engine.Options{Now: clock})
	b := enginetest.OpenDir(t, t.TempDir(), engine.Options{Now: clock})
	ra, err := a.StoreMessages(ctx, msgs)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		rb, err := b.StoreMessage(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if rb != ra[i] {
			t.Fatalf("message %d: batch %+v, single %+v", i, ra[i], rb)
		}
	}
	ca, _ := a.ListChannels(ctx, engine.Scope{})
	cb, _ := b.ListChannels(ctx, engine.Scope{})
	ga, _ := a.ListAgents(ctx, "")
	gb, _ := b.ListAgents(ctx, "")
	if fmt.Sprint(ca) != fmt.Sprint(cb) || fmt.Sprint(ga) != fmt.Sprint(gb) {
		t.Fatalf("batch and single writes differ:\n%v\n%v\n%v\n%v", ca, cb, ga, gb)
	}
	// The keyword index holds the same entries: every word of the batch
	// finds the same messages, in the same order, both ways, and each
	// message is found by its own unique word once.
	for _, q := range append(slices.Clone(enginetest.Words), "item3", "item10", "item59") {
		req := engine.SearchRequest{Query: q, Mode: engine.ModeKeyword, Limit: 100}
		sa, err := a.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		sb, err := b.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		ida, idb := enginetest.ResultIDs(sa), enginetest.ResultIDs(sb)
		if !slices.Equal(ida, idb) {
			t.Fatalf("keyword %q: batch %v, single %v", q, ida, idb)
		}
		if strings.HasPrefix(q, "item") && len(ida) != 1 {
			t.Fatalf("keyword %q: %d results, want 1", q, len(ida))
		}
	}
	for _, e := range []*engine.Engine{a, b} {
		if rep, err := ops.Consistency(ctx, e); err != nil || !rep.OK() {
			t.Fatalf("consistency: %v %v", err, rep.Problems)
		}
	}
}

// TestLargeWhereFilters: a where filter too large for one SQL expression
// is bad input naming the limit (not a SQLite error); one within the
// limits runs.
func TestLargeWhereFilters(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	or := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"word_count": %d}`, i)
		}
		return `{"$or": [` + strings.Join(parts, ",") + `]}`
	}
	in := func(n int) string {
		vals := make([]string, n)
		for i := range vals {
			vals[i] = fmt.Sprintf(`"c%d"`, i)
		}
		return `{"channel_id": {"$in": [` + strings.Join(vals, ",") + `]}}`
	}
	for _, tc := range []struct{ name, where, limit string }{
		{"999 branches", or(999), "limit of 500"},
		{"100,000 $in values", in(100_000), "limit of 10000"},
	} {
		_, err := e.Search(ctx, engine.SearchRequest{Query: "x", Filter: engine.Filter{Where: []byte(tc.where)}})
		var inv *engine.InvalidError
		if !errors.As(err, &inv) || inv.Field != "where" || !strings.Contains(inv.Rule, tc.limit) {
			t.Errorf("%s: got %v, want an InvalidError on where naming the %s", tc.name, err, tc.limit)
		}
	}
	for _, w := range []string{or(engine.MaxWhereClauses - 1), in(engine.MaxWhereValues)} {
		if _, err := e.Search(ctx, engine.SearchRequest{Query: "x", Filter: engine.Filter{Where: []byte(w)}}); err != nil {
			t.Errorf("a filter within the limits (%d bytes): %v", len(w), err)
		}
	}
}
