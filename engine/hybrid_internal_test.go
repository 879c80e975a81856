package engine

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/vecstore/where"

	"github.com/cairn-dev/cairn/engine/search"
)

// The search's steps, each on its own: plan, fuse and rankCandidates are
// pure; the steps that read (semantic, keyword, hydrate) are covered by
// the black-box tests against the naive reference (hybrid_test.go).

func TestPlanDefaultsAndRejects(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	p, err := planSearch(SearchRequest{Query: "wal", Filter: Filter{MaxAge: 48 * time.Hour}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if p.limit != DefaultSearchLimit || p.depth != 100 || p.mode != ModeHybrid || p.fusion != DefaultFusion ||
		p.rank.Profile != DefaultProfile || p.rank.Similarity != 1 || p.listing() {
		t.Errorf("defaults: %+v", p)
	}
	if w := p.filter.where; w == nil || w.Key != "timestamp" || w.Op != where.OpGte || w.Value != where.Int(now.Add(-48*time.Hour).UnixMilli()) {
		t.Errorf("max age resolved against the plan's clock: %+v", w)
	}
	if p, _ := planSearch(SearchRequest{Limit: 400}, now); p.depth != 800 || !p.listing() {
		t.Errorf("depth for limit 400: %d", p.depth)
	}
	for _, c := range []struct {
		req   SearchRequest
		field string
	}{
		{SearchRequest{Limit: MaxLimit + 1}, "limit"},
		{SearchRequest{Mode: "fuzzy"}, "mode"},
		{SearchRequest{Fusion: "sum"}, "fusion"},
		{SearchRequest{Ranking: Ranking{Profile: "recent", Recency: 1}}, "profile"},
		{SearchRequest{Ranking: Ranking{Similarity: -1}}, "weights.similarity"},
		{SearchRequest{Filter: Filter{MinConfidence: 2}}, "min_confidence"},
	} {
		var inv *InvalidError
		if _, err := planSearch(c.req, now); !errors.As(err, &inv) || inv.Field != c.field {
			t.Errorf("%+v: %v, want invalid %s", c.req, err, c.field)
		}
	}
}

func TestFuse(t *testing.T) {
	mk := func() search.Candidates {
		return search.Candidates{
			1: {BM25: 4, KeywordNorm: 1, Keyword: 0.6, KeywordRank: 1, Similarity: 0.2, HasSimilarity: true, SemanticRank: 2},
			2: {BM25: 2, KeywordNorm: 0.5, Keyword: 0.3, KeywordRank: 2},
			3: {Similarity: 0.8, HasSimilarity: true, SemanticRank: 1},
			4: {Similarity: -0.3, HasSimilarity: true, SemanticRank: 3},
		}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	kw, sw := KeywordWeight, 1-KeywordWeight
	// Whatever the fusion, the relevance is the calibrated one; the
	// calibrated fusion orders by the mode's own calibration.
	wantRel := map[SearchMode]map[int64]float64{
		ModeKeyword:  {1: search.Relevance(search.Keyword, search.Evidence{Keyword: 0.6}), 2: search.Relevance(search.Keyword, search.Evidence{Keyword: 0.3})},
		ModeSemantic: {1: search.Relevance(search.Semantic, search.Evidence{Similarity: 0.2, HasVector: true}), 3: search.Relevance(search.Semantic, search.Evidence{Similarity: 0.8, HasVector: true})},
		ModeHybrid: {
			1: search.Relevance(search.Hybrid, search.Evidence{Similarity: 0.2, HasVector: true, Keyword: 0.6}),
			// Without a vector: judged on its keyword evidence alone.
			2: search.Relevance(search.Hybrid, search.Evidence{Keyword: 0.3}),
			3: search.Relevance(search.Hybrid, search.Evidence{Similarity: 0.8, HasVector: true}),
		},
	}
	for _, c := range []struct {
		mode   SearchMode
		fusion Fusion
		want   map[int64]float64 // the order's score; nil: the relevance
	}{
		{ModeKeyword, "", nil},
		{ModeSemantic, "", nil},
		{ModeHybrid, FusionCalibrated, nil},
		{ModeHybrid, FusionWeighted, map[int64]float64{1: kw*1 + sw*0.2, 2: kw * 0.5, 3: sw * 0.8, 4: 0}},
		// keyword min 0 max 4; similarity min -0.3 max 0.8 over those with one.
		{ModeHybrid, FusionMinMax, map[int64]float64{1: kw*1 + sw*0.5/1.1, 2: kw * 0.5, 3: sw * 1, 4: 0}},
		{ModeHybrid, FusionRRF, map[int64]float64{1: (1.0/61 + 1.0/62) * 61 / 2, 2: 1.0 / 62 * 61 / 2, 3: 0.5, 4: 1.0 / 63 * 61 / 2}},
	} {
		cs := mk()
		fuse(c.mode, c.fusion, KeywordWeight, search.KeywordsKeywordShare, cs)
		for id, want := range wantRel[c.mode] {
			if !near(cs[id].Relevance, want) {
				t.Errorf("%s/%s: candidate %d relevance %v, want %v", c.mode, c.fusion, id, cs[id].Relevance, want)
			}
		}
		for id, cand := range cs {
			ev := search.Evidence{Similarity: cand.Similarity, HasVector: cand.HasSimilarity, Keyword: cand.Keyword, KeywordShare: search.KeywordsKeywordShare}
			sm := map[SearchMode]search.Mode{ModeKeyword: search.Keyword, ModeSemantic: search.Semantic, ModeHybrid: search.Hybrid}[c.mode]
			want := search.RankScore(sm, ev)
			if c.want != nil {
				want = c.want[id]
			}
			if !near(cand.Fused, want) {
				t.Errorf("%s/%s: candidate %d fused %v, want %v", c.mode, c.fusion, id, cand.Fused, want)
			}
		}
	}
}

func TestRankCandidates(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	p, err := planSearch(SearchRequest{Query: "x", Limit: 2, Ranking: Ranking{Profile: ProfileBalanced}}, now)
	if err != nil {
		t.Fatal(err)
	}
	cands := search.Candidates{1: {Fused: 0.9, Relevance: 0.9, BM25: 3}, 2: {Fused: 0.9, Relevance: 0.9}, 3: {Fused: 0.1, Relevance: 0.1}, 4: {Fused: 1, Relevance: 1}}
	p.floor = 0
	// Candidate 4 was deleted before its facts were read.
	facts := []Message{
		{ID: 1, Confidence: 0.5, CreatedAt: now.Add(-168 * time.Hour)},
		{ID: 2, Confidence: 0.5, CreatedAt: now},
		{ID: 3, Confidence: 1, CreatedAt: now},
	}
	got, _ := rankCandidates(p, facts, cands)
	if len(got) != 2 || got[0].Message.ID != 2 || got[1].Message.ID != 3 {
		t.Fatalf("order: %+v", got)
	}
	want := 0.34*0.9 + 0.33*1 + 0.33*0.5
	if r := got[0]; !(math.Abs(r.Score-want) < 1e-12) || r.Score != r.Scores.Final || r.Scores.Recency != 1 || r.Scores.Fused != 0.9 {
		t.Errorf("scores: %+v, want final %v", r, want)
	}
	// The floor drops what is less likely relevant, whatever the profile
	// makes of its recency and confidence.
	p.floor = 0.5
	got, below := rankCandidates(p, facts, cands)
	if len(got) != 2 || got[0].Message.ID != 2 || got[1].Message.ID != 1 || below != 1 {
		t.Fatalf("floor 0.5: %+v (%d below), want 2 then 1 (1 below)", got, below)
	}
}
