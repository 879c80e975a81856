package postgres_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/postgres"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// wordsEmbedder is the tests' deterministic embedder: a feature-hashed bag
// of words (bench.LexicalEmbedder), so texts sharing words are near.
func wordsEmbedder(dim int) engine.Embedder { return bench.LexicalEmbedder{D: dim} }

// clock is a fixed, advancing test clock shared by both stores' runs.
func clock() func() time.Time {
	t := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time { return t }
}

// openPair opens the embedded store in a temporary dir and the PostgreSQL
// store on a fresh database, with the same options.
func openPair(t *testing.T, emb engine.Embedder) (embedded, pg *engine.Engine) {
	t.Helper()
	return openPairWith(t, emb, engine.QueryAnalysis{})
}

// openPairWith is openPair with the engines' query analysis set to qa.
func openPairWith(t *testing.T, emb engine.Embedder, qa engine.QueryAnalysis) (embedded, pg *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	opts := engine.Options{Now: clock(), Embedder: emb, NoVectorWorker: true, QueryAnalysis: qa}
	a, err := sqlite.OpenEngine(ctx, t.TempDir(), opts, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	st, err := postgres.Open(ctx, pgtest.Database(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := engine.OpenBackend(ctx, st, postgres.Kind, "", opts)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return a, b
}

var topics = []string{
	"the build cache is invalidated when the go.mod file changes",
	"postgres connection pool exhausted under load, raise max_connections",
	"flaky test in the retry loop: the timer fires before the context is cancelled",
	"we decided to keep SQLite as the default store for laptops",
	"HNSW recall drops with selective filters unless iterative scans are on",
	"the tokenizer folds diacritics: café and cafe are one term",
	"deploy failed: the migration 0004 took a lock on messages for 30 seconds",
	"Caroline asked whether the search ranks recent decisions higher",
	"BM25 keeps rare terms strong; frequent terms like the and a add little",
	"vector outbox rows are claimed with a lease so two workers never embed twice",
}

// workload stores the same messages through e: singles, a batch with a
// duplicate, notes, a repeat, metadata and breadcrumbs, then deletes one.
func workload(t *testing.T, e *engine.Engine) []int64 {
	t.Helper()
	ctx := context.Background()
	var ids []int64
	conf := 0.9
	for i := 0; i < 60; i++ {
		m := engine.NewMessage{
			Channel:   []string{"general", "ops", "project:cairn:decisions", "agent-notes:alice"}[i%4],
			Sender:    []string{"alice", "bob", "carol"}[i%3],
			Project:   []string{"", "cairn"}[i%2],
			Content:   fmt.Sprintf("%s (note %d)", topics[i%len(topics)], i),
			Type:      []string{"", engine.TypeDecision, engine.TypePattern}[i%3],
			CreatedAt: time.Date(2026, 10, 1+i%28, i%24, 0, 0, 0, time.UTC),
		}
		if i%5 == 0 {
			m.Confidence = &conf
			m.Metadata = json.RawMessage(`{"ticket": "CAIRN-` + fmt.Sprint(i) + `", "tags": ["a", "b"]}`)
			m.Breadcrumbs = engine.Breadcrumbs{Files: []string{"engine/hybrid.go:10-20"}}
		}
		if m.Channel == "agent-notes:alice" {
			m.Sender = "alice"
		}
		r, err := e.StoreMessage(ctx, m)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if !r.Created {
			t.Fatalf("message %d not created", i)
		}
		ids = append(ids, r.ID)
	}
	batch := []engine.NewMessage{
		{Channel: "general", Sender: "dave", Content: "batch one: the outbox drains in batches of 256"},
		{Channel: "general", Sender: "dave", Content: "batch two: Caroline likes the console"},
		{Channel: "general", Sender: "dave", Content: "batch one: the outbox drains in batches of 256"},
		{Channel: "ops", Sender: "erin", Project: "infra", Content: topics[1] + " (note 1)"},
	}
	rs, err := e.StoreMessages(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	again, err := e.StoreMessage(ctx, engine.NewMessage{Channel: "general", Sender: "alice", Content: fmt.Sprintf("%s (note %d)", topics[0], 0)})
	if err != nil || again.Created || again.ID != ids[0] {
		t.Fatalf("repeat: %+v, %v; want id %d, not created", again, err, ids[0])
	}
	if _, err := e.WriteNote(ctx, engine.NewNote{Agent: "bob", Project: "cairn", Content: "remember: the differential test compares both stores"}); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteMessage(ctx, ids[7]); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteMessage(ctx, ids[7]); !errorsIs(err, engine.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	return ids
}

func errorsIs(err, target error) bool {
	return err != nil && strings.Contains(err.Error(), target.Error()) || err == target
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The same operations on the embedded store and on PostgreSQL give the
// same ids, messages, channels and filtered listings, and keyword search
// the same ranking (BM25 computed alike; scores equal to 1e-9).
func TestDifferentialReadsFiltersIDs(t *testing.T) {
	ctx := context.Background()
	a, b := openPair(t, nil)
	idsA, idsB := workload(t, a), workload(t, b)
	if !reflect.DeepEqual(idsA, idsB) {
		t.Fatalf("ids differ:\nsqlite   %v\npostgres %v", idsA, idsB)
	}
	for id := int64(1); id <= idsA[len(idsA)-1]+2; id++ {
		ma, errA := a.GetMessage(ctx, id)
		mb, errB := b.GetMessage(ctx, id)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("message %d: sqlite %v, postgres %v", id, errA, errB)
		}
		if ja, jb := jsonOf(t, ma), jsonOf(t, mb); ja != jb {
			t.Fatalf("message %d differs:\nsqlite   %s\npostgres %s", id, ja, jb)
		}
	}
	ca, err := a.ListChannels(ctx, engine.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := b.ListChannels(ctx, engine.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if ja, jb := jsonOf(t, ca), jsonOf(t, cb); ja != jb {
		t.Fatalf("channels differ:\nsqlite   %s\npostgres %s", ja, jb)
	}
	for _, project := range []string{"", "cairn", "none"} {
		both(t, "agents of "+project, a, b, func(e *engine.Engine) (any, error) { return e.ListAgents(ctx, project) })
		both(t, "alice's notes in "+project, a, b, func(e *engine.Engine) (any, error) { return e.GetAgentNotes(ctx, "alice", project, 0) })
		both(t, "bob's notes in "+project, a, b, func(e *engine.Engine) (any, error) { return e.GetAgentNotes(ctx, "bob", project, 3) })
	}
	for _, ch := range []string{"general", "ops", "project:cairn:decisions", "missing"} {
		both(t, "get channel "+ch, a, b, func(e *engine.Engine) (any, error) { return e.GetChannel(ctx, ch) })
		both(t, "channel "+ch, a, b, func(e *engine.Engine) (any, error) { return e.GetChannelMessages(ctx, ch, 0, 0) })
		both(t, "channel "+ch+" last 40 days", a, b, func(e *engine.Engine) (any, error) { return e.GetChannelMessages(ctx, ch, 40*24*time.Hour, 5) })
	}
	both(t, "channels of project cairn", a, b, func(e *engine.Engine) (any, error) { return e.ListChannels(ctx, engine.Scope{Project: "cairn"}) })
	for _, scope := range []engine.Scope{{Kind: engine.ScopeNotes}, {Kind: engine.ScopeNotes, Project: "cairn"}, {Kind: engine.ScopeProject}, {Agent: "alice"}} {
		both(t, fmt.Sprintf("channels in %+v", scope), a, b, func(e *engine.Engine) (any, error) { return e.ListChannels(ctx, scope) })
	}
	yes := true
	filters := []engine.Filter{
		{},
		{ChannelIDs: []string{"general", "ops"}},
		{SenderIDs: []string{"bob"}, MessageTypes: []string{engine.TypeDecision}},
		{ExcludeSender: "alice", Project: "cairn"},
		{MinConfidence: 0.8},
		{ChannelTypes: []string{engine.ChannelProject, engine.ChannelAgentNotes}},
		{Since: time.Date(2026, 10, 10, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 10, 20, 0, 0, 0, 0, time.UTC)},
		{HasBreadcrumbs: &yes},
		{MinWordCount: 12},
		{MaxAge: 30 * 24 * time.Hour},
		{Where: json.RawMessage(`{"$or": [{"channel_id": {"$eq": "ops"}}, {"word_count": {"$lte": 9}}, {"confidence": {"$ne": 0.5}}]}`)},
		{Where: json.RawMessage(`{"$and": [{"agent_name": {"$nin": ["carol"]}}, {"age_days": {"$lt": 45}}, {"has_breadcrumbs": false}]}`)},
		{Where: json.RawMessage(`{"channel_type": {"$in": []}}`)},
		{Where: json.RawMessage(`{"message_type": {"$in": ["decision", "pattern"]}}`)},
	}
	queries := []string{"", "the outbox", "HNSW recall filters", "Caroline decisions", "café", "build cache go.mod", "postgres SQLite store", "zzzz nothing"}
	for fi, f := range filters {
		for _, q := range queries {
			for _, limit := range []int{3, 10, 100} {
				req := engine.SearchRequest{Query: q, Filter: f, Limit: limit, Mode: engine.ModeKeyword, MinScore: new(float64)}
				ra, errA := a.SearchDetailed(ctx, req)
				rb, errB := b.SearchDetailed(ctx, req)
				if errA != nil || errB != nil {
					// Validation is shared: both refuse alike.
					if errA == nil || errB == nil || errA.Error() != errB.Error() {
						t.Fatalf("filter %d %q: sqlite %v, postgres %v", fi, q, errA, errB)
					}
					continue
				}
				if len(ra.Results) != len(rb.Results) {
					t.Fatalf("filter %d %q limit %d: %d results on sqlite, %d on postgres", fi, q, limit, len(ra.Results), len(rb.Results))
				}
				for i := range ra.Results {
					x, y := ra.Results[i], rb.Results[i]
					if x.Message.ID != y.Message.ID || math.Abs(x.Score-y.Score) > 1e-9 || math.Abs(x.KeywordScore-y.KeywordScore) > 1e-9*max(1, x.KeywordScore) || x.Snippet != y.Snippet {
						t.Fatalf("filter %d %q limit %d, result %d:\nsqlite   %d %v %v %q\npostgres %d %v %v %q", fi, q, limit, i,
							x.Message.ID, x.Score, x.KeywordScore, x.Snippet, y.Message.ID, y.Score, y.KeywordScore, y.Snippet)
					}
				}
			}
		}
	}
}

// Semantic and hybrid search after the vectors are built: the embedded
// store searches vecstore's graph, PostgreSQL pgvector's HNSW, both
// approximate, and the embedded store's similarities come from 8-bit
// codes. The stated tolerance: each top-10 overlaps in at least 9 of 10
// ids, or every id only one side has scores within 5e-3 of the other
// side's last score (a tie at the cut) or under 0.05 (noise); and the
// similarities of the shared ids
// agree to 5e-3 (the embedded store keeps message vectors as 8-bit codes,
// PostgreSQL as float32).
func TestDifferentialRankedSearch(t *testing.T) {
	ctx := context.Background()
	a, b := openPair(t, wordsEmbedder(64))
	workload(t, a)
	workload(t, b)
	for _, e := range []*engine.Engine{a, b} {
		if err := ops.SyncVectors(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{"the outbox", "HNSW recall filters", "Caroline decisions", "build cache go.mod", "postgres SQLite store", "tokenizer folds diacritics", "flaky timer test"}
	filters := []engine.Filter{{}, {ChannelIDs: []string{"general"}}, {SenderIDs: []string{"bob", "carol"}, MinConfidence: 0.5},
		{Where: json.RawMessage(`{"word_count": {"$gte": 12}}`)}}
	for _, mode := range []engine.SearchMode{engine.ModeSemantic, engine.ModeHybrid} {
		for fi, f := range filters {
			for _, q := range queries {
				req := engine.SearchRequest{Query: q, Filter: f, Limit: 10, Mode: mode, MinScore: new(float64)}
				ra, err := a.SearchDetailed(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				rb, err := b.SearchDetailed(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if ra.Mode != rb.Mode || len(ra.Notes) != len(rb.Notes) {
					t.Fatalf("%s %q: sqlite ran %s %v, postgres %s %v", mode, q, ra.Mode, ra.Notes, rb.Mode, rb.Notes)
				}
				if noSignal(ra.Results) {
					// Min-max fusion stretches similarities that are all
					// about 0 (no message is near the query) to [0,1]: the
					// embedded store's 8-bit codes then rank their rounding
					// noise, and no order is meaningful to compare.
					continue
				}
				if len(ra.Results) != len(rb.Results) || !similarTop(ra.Results, rb.Results) {
					for i := range ra.Results {
						t.Logf("%d %.6f | %d %.6f", ra.Results[i].Message.ID, ra.Results[i].Score, rb.Results[i].Message.ID, rb.Results[i].Score)
					}
					t.Fatalf("%s filter %d %q: top-10 overlap %d of %d/%d, beyond ties at the cut", mode, fi, q, overlap(ra.Results, rb.Results), len(ra.Results), len(rb.Results))
				}
				sims := map[int64]float64{}
				for _, r := range ra.Results {
					sims[r.Message.ID] = r.Scores.Similarity
				}
				for _, r := range rb.Results {
					if s, ok := sims[r.Message.ID]; ok && math.Abs(s-r.Scores.Similarity) > 5e-3 {
						t.Fatalf("%s %q message %d: similarity %v on sqlite, %v on postgres", mode, q, r.Message.ID, s, r.Scores.Similarity)
					}
					if r.VectorMissing {
						t.Fatalf("%s %q message %d: vector missing after sync", mode, q, r.Message.ID)
					}
				}
			}
		}
	}
}

// TestDifferentialFrequentTerms: past 1,000 messages both stores drop a
// query's terms found in more than a third of the messages (while another
// remains) and rank the rest alike: the same keyword hits in the same
// order.
func TestDifferentialFrequentTerms(t *testing.T) {
	ctx := context.Background()
	a, b := openPair(t, nil)
	words := strings.Fields("outbox vector cache build deploy sqlite postgres filter recall tokenizer")
	var batch []engine.NewMessage
	for i := range 1200 {
		content := fmt.Sprintf("the %s %s note %d", words[i%len(words)], words[(i*7+3)%len(words)], i)
		if i%2 == 0 {
			content += " and the common part"
		}
		batch = append(batch, engine.NewMessage{Channel: "general", Sender: "alice", Content: content,
			CreatedAt: time.Date(2026, 10, 1, 0, 0, i, 0, time.UTC)})
	}
	for _, e := range []*engine.Engine{a, b} {
		for i := 0; i < len(batch); i += 400 {
			if _, err := e.StoreMessages(ctx, batch[i:i+400]); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, q := range []string{"the outbox", "common part recall", "the common", "vector note"} {
		req := engine.SearchRequest{Query: q, Mode: engine.ModeKeyword, Limit: 30, MinScore: new(float64)}
		ra, err := a.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := b.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(ra) == 0 || len(ra) != len(rb) {
			t.Fatalf("%q: %d results on sqlite, %d on postgres", q, len(ra), len(rb))
		}
		for i := range ra {
			// The keyword evidence divides by the query's mass, which
			// each store counts on its own: it must agree too.
			if math.Abs(ra[i].Scores.Keyword-rb[i].Scores.Keyword) > 1e-9 {
				t.Fatalf("%q result %d: keyword evidence %v on sqlite, %v on postgres", q, i, ra[i].Scores.Keyword, rb[i].Scores.Keyword)
			}
			if math.Abs(ra[i].KeywordScore-rb[i].KeywordScore) > 1e-9*math.Abs(ra[i].KeywordScore) {
				t.Fatalf("%q result %d: sqlite %d (%v), postgres %d (%v)", q, i, ra[i].Message.ID, ra[i].KeywordScore, rb[i].Message.ID, rb[i].KeywordScore)
			}
		}
	}
}

func overlap(a, b []engine.SearchResult) int {
	in := map[int64]bool{}
	for _, r := range a {
		in[r.Message.ID] = true
	}
	n := 0
	for _, r := range b {
		if in[r.Message.ID] {
			n++
		}
	}
	return n
}

// noSignal reports whether no result is near the query (similarity
// under 0.1).
func noSignal(rs []engine.SearchResult) bool {
	for _, r := range rs {
		if r.Scores.Similarity >= 0.1 {
			return false
		}
	}
	return true
}

// similarTop reports whether two top lists agree within the tolerance of
// TestDifferentialRankedSearch.
func similarTop(a, b []engine.SearchResult) bool {
	if overlap(a, b) >= min(9, len(a)) {
		return true
	}
	return tiesAtCut(a, b) && tiesAtCut(b, a)
}

// tiesAtCut reports whether every result of b missing from a scores within
// 5e-3 of a's last result or under 0.05 (near nothing: the order of such
// results is rounding noise).
func tiesAtCut(a, b []engine.SearchResult) bool {
	in := map[int64]bool{}
	for _, r := range a {
		in[r.Message.ID] = true
	}
	last := a[len(a)-1].Score
	for _, r := range b {
		if !in[r.Message.ID] && r.Score >= 0.05 && math.Abs(r.Score-last) > 5e-3 {
			return false
		}
	}
	return true
}

// The reply lift (engine/replies.go) ranks alike on both stores: the reply
// to a best candidate that asks something joins the results with at least
// 0.95 of its asker's relevance, only when it is the next message of the
// channel, from another sender, within 12 hours, and passes the filter.
// The engines blend no ranks, which would replace the relevance the lift
// sets (engine/rankblend.go; TestDifferentialTurnContext compares it).
func TestDifferentialReplyLift(t *testing.T) {
	a, b := openPairWith(t, wordsEmbedder(64), engine.QueryAnalysis{NoRankBlend: true, LiftReplies: true})
	t0 := time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC)
	conversation := []engine.NewMessage{
		{Channel: "chat", Sender: "alice", Content: "How long have you been married to Melanie?", CreatedAt: t0},
		{Channel: "chat", Sender: "bob", Content: "five years already, we met in Lisbon", CreatedAt: t0.Add(time.Hour)},
		{Channel: "chat", Sender: "alice", Content: "Where do you keep the spare keys?", CreatedAt: t0.Add(2 * time.Hour)},
		{Channel: "chat", Sender: "alice", Content: "never mind, found them", CreatedAt: t0.Add(3 * time.Hour)},
		{Channel: "chat", Sender: "bob", Content: "Did you water the tomato plants?", CreatedAt: t0.Add(4 * time.Hour)},
		{Channel: "chat", Sender: "alice", Content: "twice, in the morning", CreatedAt: t0.Add(17 * time.Hour)},
		{Channel: "ops", Sender: "carol", Content: "Did the nightly deploy finish?", CreatedAt: t0},
		{Channel: "ops", Sender: "dave", Content: "yes, green at noon", CreatedAt: t0.Add(30 * time.Minute)},
	}
	ids := map[string]int64{}
	for _, e := range []*engine.Engine{a, b} {
		workload(t, e)
		for i, r := range storeAndEmbed(t, e, conversation) {
			if id, ok := ids[conversation[i].Content]; ok && id != r.ID {
				t.Fatalf("%q: id %d on one store, %d on the other", conversation[i].Content, id, r.ID)
			}
			ids[conversation[i].Content] = r.ID
		}
	}
	cases := []struct {
		name   string
		query  string
		filter engine.Filter
		asker  string
		reply  string // "" = no reply lifted
	}{
		{"asked and answered", "married Melanie", engine.Filter{}, conversation[0].Content, conversation[1].Content},
		{"the reply filtered out", "married Melanie", engine.Filter{ExcludeSender: "bob"}, conversation[0].Content, ""},
		{"another channel", "nightly deploy finish", engine.Filter{}, conversation[6].Content, conversation[7].Content},
		{"only the asker's sender", "nightly deploy finish", engine.Filter{ChannelIDs: []string{"ops"}, SenderIDs: []string{"carol"}}, conversation[6].Content, ""},
		{"next message by the asker", "spare keys", engine.Filter{}, conversation[2].Content, ""},
		{"next message too late", "water tomato plants", engine.Filter{}, conversation[4].Content, ""},
	}
	for _, c := range cases {
		req := engine.SearchRequest{Query: c.query, Filter: c.filter, Limit: 10, Mode: engine.ModeHybrid, MinScore: new(float64)}
		got := searchBoth(t, req, a, b)
		for i, store := range []string{"sqlite", "postgres"} {
			asker, ok := got[i][ids[c.asker]]
			if !ok {
				t.Fatalf("%s %s: the asker is not among the results", store, c.name)
			}
			for id, r := range got[i] {
				lifted := r.Scores.Fused >= 0.95*asker.Scores.Fused-1e-9 && id != asker.Message.ID && r.Scores.Keyword == 0
				if lifted && ids[c.reply] != id {
					t.Errorf("%s %s: message %d %q lifted, want %q", store, c.name, id, r.Message.Content, c.reply)
				}
			}
			if c.reply == "" {
				continue
			}
			r, ok := got[i][ids[c.reply]]
			if !ok || math.Abs(r.Scores.Fused-0.95*asker.Scores.Fused) > 1e-9 {
				t.Errorf("%s %s: reply %q has fused %v (found %v), want 0.95 × the asker's %v", store, c.name, c.reply, r.Scores.Fused, ok, asker.Scores.Fused)
			}
		}
		if !similarTop(sorted(got[0]), sorted(got[1])) {
			t.Errorf("%s: the two stores' results differ beyond the ranked-search tolerance", c.name)
		}
	}
}

// sorted returns the results of m best first.
func sorted(m map[int64]engine.SearchResult) []engine.SearchResult {
	out := make([]engine.SearchResult, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	slices.SortFunc(out, func(x, y engine.SearchResult) int {
		if x.Score != y.Score {
			return cmp.Compare(y.Score, x.Score)
		}
		return cmp.Compare(y.Message.ID, x.Message.ID)
	})
	return out
}

// Semantic search scores a conversation turn with its neighbours on both
// stores alike: the same turns get a context similarity above their own,
// and the results agree within the ranked-search tolerance; so do hybrid
// search's, whose ranks are blended with those semantic ranks.
func TestDifferentialTurnContext(t *testing.T) {
	a, b := openPair(t, wordsEmbedder(64))
	t0 := time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC)
	conversation := []engine.NewMessage{
		{Channel: "chat", Sender: "alice", Content: "We finally adopted a dog from the shelter last weekend", CreatedAt: t0},
		{Channel: "chat", Sender: "bob", Content: "That is wonderful news, congratulations!", CreatedAt: t0.Add(10 * time.Minute)},
		{Channel: "chat", Sender: "alice", Content: "She loves long walks by the river", CreatedAt: t0.Add(20 * time.Minute)},
		{Channel: "chat", Sender: "bob", Content: "Thanks, I will bring treats", CreatedAt: t0.Add(3 * time.Hour)},
		{Channel: "notes", Sender: "carol", Content: "the shelter dog needs a vaccination in May", CreatedAt: t0},
		{Channel: "notes", Sender: "carol", Content: "congratulations card for the team", CreatedAt: t0.Add(time.Minute)},
	}
	for _, e := range []*engine.Engine{a, b} {
		workload(t, e)
		storeAndEmbed(t, e, conversation)
	}
	for _, q := range []string{"adopted dog shelter", "river walks", "congratulations", "treats"} {
		req := engine.SearchRequest{Query: q, Limit: 10, Mode: engine.ModeSemantic, MinScore: new(float64)}
		got := searchBoth(t, req, a, b)
		lifted := func(m map[int64]engine.SearchResult) map[int64]bool {
			out := map[int64]bool{}
			for id, r := range m {
				if r.Scores.Context > r.Scores.Similarity+1e-9 {
					out[id] = true
				}
			}
			return out
		}
		la, lb := lifted(got[0]), lifted(got[1])
		if q == "adopted dog shelter" && len(la) == 0 {
			t.Errorf("%q: no turn scored with its context on the embedded store", q)
		}
		if !maps.Equal(la, lb) {
			t.Errorf("%q: turns scored with context: embedded %v, PostgreSQL %v", q, la, lb)
		}
		if !similarTop(sorted(got[0]), sorted(got[1])) {
			t.Errorf("%q: the two stores' results differ beyond the ranked-search tolerance", q)
		}
		req.Mode = engine.ModeHybrid
		if got := searchBoth(t, req, a, b); !similarTop(sorted(got[0]), sorted(got[1])) {
			t.Errorf("%q, hybrid (rank blend): the two stores' results differ beyond the ranked-search tolerance", q)
		}
	}
}

// storeAndEmbed stores ms in e and fills their vectors.
func storeAndEmbed(t *testing.T, e *engine.Engine, ms []engine.NewMessage) []engine.WriteResult {
	t.Helper()
	ctx := context.Background()
	rs, err := e.StoreMessages(ctx, ms)
	if err != nil {
		t.Fatal(err)
	}
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	return rs
}

// searchBoth runs req on each engine and returns each one's results by
// message id.
func searchBoth(t *testing.T, req engine.SearchRequest, es ...*engine.Engine) [2]map[int64]engine.SearchResult {
	t.Helper()
	var got [2]map[int64]engine.SearchResult
	for i, e := range es {
		resp, err := e.SearchDetailed(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = map[int64]engine.SearchResult{}
		for _, r := range resp.Results {
			got[i][r.Message.ID] = r
		}
	}
	return got
}
