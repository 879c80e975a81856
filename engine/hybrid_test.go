package engine_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	calibration "github.com/cairn-dev/cairn/engine/search"
	"github.com/cairn-dev/cairn/internal/enginetest"
	"github.com/cairn-dev/cairn/vecstore/chroma"
)

var seed = flag.Uint64("seed", 0, "seed of randomized tests (0 = time-based)")

func testSeed(t *testing.T) uint64 {
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -seed %d)", s, s)
	return s
}

type refCorpus struct {
	e        *engine.Engine
	emb      *enginetest.HashEmbedder
	now      time.Time
	msgs     []engine.Message
	chanType map[string]string
	// vecs holds each message's vector as stored (message collections keep
	// 8-bit codes), so that the reference computes the index's similarities.
	vecs map[int64][]float32
}

// storedVectors reads every message vector back from the engine's store.
func storedVectors(t *testing.T, e *engine.Engine) map[int64][]float32 {
	t.Helper()
	ctx := context.Background()
	st := enginetest.StoreOf(e).VectorStore()
	colls, err := st.ListCollections(ctx, chroma.DefaultTenant, "cairn", nil, 0)
	if err != nil || len(colls) != 1 {
		t.Fatalf("message collections: %v %v", colls, err)
	}
	res, err := st.Get(ctx, colls[0].ID, chroma.GetRequest{Include: []chroma.Include{chroma.IncludeEmbeddings}})
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[int64][]float32, len(res.IDs))
	for i, id := range res.IDs {
		n, _ := strconv.ParseInt(id, 10, 64)
		out[n] = res.Embeddings[i]
	}
	return out
}

// buildRefCorpus stores n random messages across channel types, senders,
// projects, types, confidences, ages and breadcrumbs, with vectors.
func buildRefCorpus(t *testing.T, r *rand.Rand, n int) *refCorpus {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	emb := enginetest.NewHashEmbedder("hash-ref", 24)
	// The reference scores a message by its own cosine: turn context (its
	// own tests in turncontext_test.go) would also score it by neighbours.
	e := enginetest.OpenDir(t, t.TempDir(), engine.Options{Embedder: emb, Now: func() time.Time { return now }, QueryAnalysis: engine.QueryAnalysis{NoTurnContext: true}})
	if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: "general"}); err != nil {
		t.Fatal(err)
	}
	vocab := enginetest.Words[:24]
	agents := []string{"ann", "bob", "cid"}
	var in []engine.NewMessage
	for i := range n {
		var ws []string
		for range 2 + r.IntN(6) {
			ws = append(ws, vocab[r.IntN(len(vocab))])
		}
		ws = append(ws, fmt.Sprintf("m%d", i))
		a := agents[r.IntN(len(agents))]
		proj := []string{"", "cairn", "web"}[r.IntN(3)]
		var ch string
		switch r.IntN(3) {
		case 0:
			ch = engine.NotesChannelID(a, proj)
		case 1:
			ch = engine.ProjectChannelID("cairn", "decisions")
		default:
			ch = "general"
		}
		m := engine.NewMessage{Channel: ch, Sender: a, Project: proj, Content: strings.Join(ws, " "),
			Confidence: enginetest.Ptr(math.Round(r.Float64()*100) / 100), Type: []string{"message", "decision", "pattern"}[r.IntN(3)],
			CreatedAt: now.Add(-time.Duration(r.IntN(60*24)) * time.Hour)}
		if r.IntN(4) == 0 {
			m.Breadcrumbs.Files = []string{"f.go"}
		}
		in = append(in, m)
	}
	if _, err := e.StoreMessages(ctx, in); err != nil {
		t.Fatal(err)
	}
	enginetest.MustSync(t, e)
	all, err := e.Search(ctx, engine.SearchRequest{Limit: engine.MaxLimit})
	if err != nil || len(all) != n {
		t.Fatalf("listing: %d %v", len(all), err)
	}
	c := &refCorpus{e: e, emb: emb, now: now, chanType: map[string]string{}, vecs: storedVectors(t, e)}
	for _, res := range all {
		c.msgs = append(c.msgs, res.Message)
	}
	chs, err := e.ListChannels(ctx, engine.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range chs {
		c.chanType[ch.ID] = ch.ChannelType
	}
	return c
}

// refFilter is the naive evaluation of the filters the test uses.
func (c *refCorpus) keep(f engine.Filter, m engine.Message) bool {
	if len(f.ChannelIDs) > 0 && !slices.Contains(f.ChannelIDs, m.ChannelID) {
		return false
	}
	if len(f.ChannelTypes) > 0 && !slices.Contains(f.ChannelTypes, c.chanType[m.ChannelID]) {
		return false
	}
	if len(f.SenderIDs) > 0 && !slices.Contains(f.SenderIDs, m.SenderID) {
		return false
	}
	if f.ExcludeSender != "" && m.SenderID == f.ExcludeSender {
		return false
	}
	if f.Project != "" && m.SenderProjectID != f.Project {
		return false
	}
	if len(f.MessageTypes) > 0 && !slices.Contains(f.MessageTypes, m.MessageType) {
		return false
	}
	if m.Confidence < f.MinConfidence {
		return false
	}
	since := f.Since
	if f.MaxAge > 0 && c.now.Add(-f.MaxAge).After(since) {
		since = c.now.Add(-f.MaxAge)
	}
	if !since.IsZero() && m.CreatedAt.Before(since) {
		return false
	}
	if !f.Until.IsZero() && !m.CreatedAt.Before(f.Until) {
		return false
	}
	if f.HasBreadcrumbs != nil && m.HasBreadcrumbs != *f.HasBreadcrumbs {
		return false
	}
	if m.WordCount < f.MinWordCount {
		return false
	}
	if len(f.Where) > 0 { // the test's where filters: {"$or": [{"word_count": {"$gte": W}}, {"agent_name": A}]}
		var w struct {
			Or []struct {
				WordCount *struct {
					Gte int `json:"$gte"`
				} `json:"word_count"`
				Agent *string `json:"agent_name"`
			} `json:"$or"`
		}
		if err := json.Unmarshal(f.Where, &w); err != nil {
			panic(err)
		}
		ok := false
		for _, o := range w.Or {
			if o.WordCount != nil && m.WordCount >= o.WordCount.Gte || o.Agent != nil && m.SenderID == *o.Agent {
				ok = true
			}
		}
		return ok
	}
	return true
}

type refResult struct {
	id    int64
	final float64 // the score: the profile over the calibrated relevance
	order float64 // the profile over what orders (the fusion's score)
}

// reference ranks the filtered corpus by the documented formulas, computing
// similarities by brute force and taking BM25 scores from an unfiltered
// keyword search (FTS5's statistics do not depend on the filter).
func (c *refCorpus) reference(t *testing.T, req engine.SearchRequest, bm25, evidence map[int64]float64) []refResult {
	qv := enginetest.HashVector(c.emb.ModelID(), req.Query, c.emb.Dim())
	type cand struct {
		m           engine.Message
		kw, kn, sim float64
		isKw        bool
		kwRank      int
		semRank     int
	}
	var cs []*cand
	best := 0.0
	for _, m := range c.msgs {
		if !c.keep(req.Filter, m) {
			continue
		}
		x := &cand{m: m, sim: engine.Cosine(qv, c.vecs[m.ID])}
		x.kw, x.isKw = bm25[m.ID]
		if x.isKw {
			best = max(best, x.kw)
		}
		cs = append(cs, x)
	}
	for _, x := range cs {
		if x.isKw {
			x.kn = x.kw / best
		}
	}
	byKw := slices.Clone(cs)
	sort.SliceStable(byKw, func(i, j int) bool {
		if byKw[i].kw != byKw[j].kw {
			return byKw[i].kw > byKw[j].kw
		}
		return byKw[i].m.ID > byKw[j].m.ID
	})
	for i, x := range byKw {
		if x.isKw {
			x.kwRank = i + 1
		}
	}
	bySim := slices.Clone(cs)
	sort.SliceStable(bySim, func(i, j int) bool { return bySim[i].sim > bySim[j].sim })
	for i, x := range bySim {
		x.semRank = i + 1
	}
	klo, khi, slo, shi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, x := range cs {
		if req.Mode == engine.ModeHybrid && !x.isKw && false {
			continue
		}
		klo, khi = min(klo, x.kw), max(khi, x.kw)
		slo, shi = min(slo, x.sim), max(shi, x.sim)
	}
	clamp := func(v float64) float64 { return max(0, min(1, v)) }
	floor := calibration.DefaultFloor
	if req.MinScore != nil {
		floor = *req.MinScore
	}
	var out []refResult
	for _, x := range cs {
		var rel, calibrated float64
		switch req.Mode {
		case engine.ModeKeyword:
			if !x.isKw {
				continue
			}
			calibrated = calibration.Relevance(calibration.Keyword, calibration.Evidence{Keyword: evidence[x.m.ID]})
			rel = calibrated
		case engine.ModeSemantic:
			calibrated = calibration.Relevance(calibration.Semantic, calibration.Evidence{Similarity: x.sim, HasVector: true})
			rel = calibrated
		default:
			ev := calibration.Evidence{Similarity: x.sim, HasVector: true, Keyword: evidence[x.m.ID], KeywordShare: calibration.KeywordShare(req.Query)}
			calibrated = calibration.Relevance(calibration.Hybrid, ev)
			switch req.Fusion {
			case engine.FusionRRF:
				v := 1 / float64(60+x.semRank)
				if x.isKw {
					v += 1 / float64(60+x.kwRank)
				}
				rel = v / (2.0 / 61)
			case engine.FusionMinMax:
				k, s := 0.0, 1.0
				if khi > klo {
					k = (x.kw - klo) / (khi - klo)
				} else if x.kw > 0 {
					k = 1
				}
				if shi > slo {
					s = (x.sim - slo) / (shi - slo)
				}
				rel = engine.KeywordWeight*k + (1-engine.KeywordWeight)*s
			case engine.FusionWeighted:
				rel = engine.KeywordWeight*x.kn + (1-engine.KeywordWeight)*clamp(x.sim)
			default:
				rel = calibration.RankScore(calibration.Hybrid, ev)
			}
		}
		if calibrated < floor {
			continue
		}
		age := c.now.Sub(x.m.CreatedAt)
		days := age.Hours() / 24
		w := map[string][4]float64{ // sim, rec, conf, half-life h
			"similarity": {1, 0, 0, 0}, "balanced": {.34, .33, .33, 168}, "recent": {.3, .6, .1, 24}, "quality": {.4, .1, .5, 720}, "custom": {.5, .2, .3, 48},
		}
		final := func(rel float64) float64 {
			if req.Ranking.Profile == "multiplicative" {
				return rel * x.m.Confidence * math.Pow(0.95, days)
			}
			p := w[req.Ranking.Profile]
			rec := 1.0
			if p[3] > 0 {
				rec = math.Exp(-math.Ln2 * age.Hours() / p[3])
			}
			return p[0]*rel + p[1]*rec + p[2]*x.m.Confidence
		}
		out = append(out, refResult{x.m.ID, final(calibrated), final(rel)})
	}
	// Ties as the engine breaks them: by score, then newer id.
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.order != b.order {
			return a.order > b.order
		}
		if a.final != b.final {
			return a.final > b.final
		}
		return a.id > b.id
	})
	return out
}

// TestHybridMatchesNaiveReference checks filtering, fusion and every
// ranking profile against a brute-force reference on small random corpora.
func TestHybridMatchesNaiveReference(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testSeed(t), 6))
	c := buildRefCorpus(t, r, 90)
	filters := []engine.Filter{
		{},
		{ChannelTypes: []string{engine.ChannelAgentNotes}},
		{SenderIDs: []string{"ann", "bob"}, MinConfidence: 0.3},
		{ExcludeSender: "cid", MessageTypes: []string{"decision", "pattern"}},
		{Project: "cairn", HasBreadcrumbs: enginetest.Ptr(false)},
		{MaxAge: 20 * 24 * time.Hour, MinWordCount: 4},
		{Since: c.now.Add(-40 * 24 * time.Hour), Until: c.now.Add(-5 * 24 * time.Hour), ChannelIDs: []string{"general", engine.ProjectChannelID("cairn", "decisions")}},
		{Where: json.RawMessage(`{"$or": [{"word_count": {"$gte": 6}}, {"agent_name": "ann"}]}`)},
		{HasBreadcrumbs: enginetest.Ptr(true), ChannelTypes: []string{engine.ChannelPlain, engine.ChannelProject}},
	}
	profiles := []engine.Ranking{
		{Profile: "similarity"}, {Profile: "balanced"}, {Profile: "recent"}, {Profile: "quality"}, {Profile: "multiplicative"},
		{Profile: "custom", Similarity: .5, Recency: .2, Confidence: .3, HalfLife: 48 * time.Hour},
	}
	nq := 6
	if testing.Short() { // -race -short: a third of the work
		nq = 2
		profiles = []engine.Ranking{{Profile: "similarity"}, {Profile: "balanced"}, {Profile: "multiplicative"}}
	}
	checked := 0
	for qi := range nq {
		var q []string
		for range 1 + r.IntN(3) {
			q = append(q, enginetest.Words[r.IntN(24)])
		}
		query := strings.Join(q, " ")
		kwAll, err := c.e.Search(ctx, engine.SearchRequest{Query: query, Mode: engine.ModeKeyword, Limit: engine.MaxLimit, MinScore: new(float64)})
		if err != nil {
			t.Fatal(err)
		}
		bm25, evidence := map[int64]float64{}, map[int64]float64{}
		for _, h := range kwAll {
			bm25[h.Message.ID] = h.KeywordScore
			evidence[h.Message.ID] = h.Scores.Keyword
		}
		// Every other query runs without the relevance floor, so that
		// the ranking is checked on whole lists too.
		var minScore *float64
		if qi%2 == 1 {
			minScore = new(float64)
		}
		for fi, f := range filters {
			for _, mode := range []engine.SearchMode{engine.ModeKeyword, engine.ModeSemantic, engine.ModeHybrid} {
				fusions := []engine.Fusion{""}
				if mode == engine.ModeHybrid {
					fusions = append(fusions, engine.FusionWeighted, engine.FusionMinMax, engine.FusionRRF)
				}
				for _, fu := range fusions {
					for _, p := range profiles {
						req := engine.SearchRequest{Query: query, Filter: f, Mode: mode, Fusion: fu, Ranking: p, Limit: 10, MinScore: minScore}
						got, err := c.e.Search(ctx, req)
						if err != nil {
							t.Fatalf("q%d f%d %s/%s/%s: %v", qi, fi, mode, fu, p.Profile, err)
						}
						want := c.reference(t, req, bm25, evidence)
						byID := map[int64]float64{}
						for _, w := range want {
							byID[w.id] = w.final
						}
						if len(got) != min(10, len(want)) {
							t.Fatalf("q%d %q f%d %s/%s/%s: %d results, reference %d", qi, query, fi, mode, fu, p.Profile, len(got), len(want))
						}
						for i, g := range got {
							ref, ok := byID[g.Message.ID]
							if !ok {
								t.Fatalf("q%d %q f%d %s/%s/%s: result %d (id %d) fails the filter", qi, query, fi, mode, fu, p.Profile, i, g.Message.ID)
							}
							if math.Abs(ref-g.Score) > 1e-4 || math.Abs(want[i].final-g.Score) > 1e-4 || g.Score != g.Scores.Final {
								t.Fatalf("q%d %q f%d %s/%s/%s: result %d id %d score %v (%+v), reference for it %v, reference at rank %v",
									qi, query, fi, mode, fu, p.Profile, i, g.Message.ID, g.Score, g.Scores, ref, want[i].final)
							}
						}
						checked++
					}
				}
			}
		}
	}
	t.Logf("%d searches match the reference", checked)
}

// TestListingOrder: no query lists by recency, then confidence.
func TestListingOrder(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	e := enginetest.OpenDir(t, t.TempDir(), engine.Options{Now: func() time.Time { return now }})
	at := now.Add(-48 * time.Hour)
	for i, conf := range []float64{0.2, 0.9, 0.5} {
		enginetest.MustStore(t, e, engine.NewMessage{Channel: "agent-notes:ann", Sender: "ann", Content: fmt.Sprint("same time ", i), Confidence: enginetest.Ptr(conf), CreatedAt: at})
	}
	newest := enginetest.MustStore(t, e, engine.NewMessage{Channel: "agent-notes:ann", Sender: "ann", Content: "newest", Confidence: enginetest.Ptr(0.1), CreatedAt: now})
	rs, err := e.Search(ctx, engine.SearchRequest{Ranking: engine.Ranking{Profile: "recent"}})
	if err != nil {
		t.Fatal(err)
	}
	var confs []float64
	for _, r := range rs[1:] {
		confs = append(confs, r.Message.Confidence)
	}
	if rs[0].Message.ID != newest || !slices.Equal(confs, []float64{0.9, 0.5, 0.2}) {
		t.Fatalf("order: %v", rs)
	}
	if rs[0].Scores.Recency != 1 || math.Abs(rs[1].Scores.Recency-0.25) > 1e-9 || rs[1].Score != rs[1].Scores.Recency {
		t.Fatalf("recency scores (24 h half-life, 48 h old): %+v %+v", rs[0].Scores, rs[1].Scores)
	}
}
