package search_test

import (
	"math"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine/search"
)

var modes = []search.Mode{search.Hybrid, search.Semantic, search.Keyword}

// Relevance is a probability: in [0,1] for any features, NaN included.
func TestRelevanceInUnitInterval(t *testing.T) {
	for _, m := range modes {
		for _, sim := range []float64{-1, -0.2, 0, 0.3, 0.7, 1, 2, math.NaN(), math.Inf(1)} {
			for _, kw := range []float64{0, 0.1, 0.5, 1, math.NaN()} {
				for _, vec := range []bool{false, true} {
					r := search.Relevance(m, search.Evidence{Similarity: sim, HasVector: vec, Keyword: kw})
					if !(r >= 0 && r <= 1) {
						t.Errorf("mode %d sim %v kw %v vector %v: relevance %v", m, sim, kw, vec, r)
					}
				}
			}
		}
	}
}

// More evidence never lowers relevance: monotone in similarity and in the
// keyword evidence, in every mode, and strictly so in the features the
// mode reads.
func TestRelevanceMonotone(t *testing.T) {
	steps := []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}
	for _, m := range modes {
		for _, fixed := range steps {
			prevS, prevK := -1.0, -1.0
			for _, x := range steps {
				s := search.Relevance(m, search.Evidence{Similarity: x, HasVector: true, Keyword: fixed})
				k := search.Relevance(m, search.Evidence{Similarity: fixed, HasVector: true, Keyword: x})
				if s < prevS || k < prevK {
					t.Fatalf("mode %d: not monotone at %v (fixed %v): %v after %v, %v after %v", m, x, fixed, s, prevS, k, prevK)
				}
				prevS, prevK = s, k
			}
		}
	}
	for _, c := range []struct {
		m        search.Mode
		sim, kw  bool
		name     string
		evidence search.Evidence
	}{
		{search.Hybrid, true, true, "hybrid", search.Evidence{HasVector: true}},
		{search.Semantic, true, false, "semantic", search.Evidence{HasVector: true}},
		{search.Keyword, false, true, "keyword", search.Evidence{}},
	} {
		lo := search.Relevance(c.m, search.Evidence{Similarity: 0.2, HasVector: true, Keyword: 0.1})
		if c.sim {
			if hi := search.Relevance(c.m, search.Evidence{Similarity: 0.6, HasVector: true, Keyword: 0.1}); !(hi > lo) {
				t.Errorf("%s: similarity 0.6 scores %v, not above 0.2's %v", c.name, hi, lo)
			}
		}
		if c.kw {
			if hi := search.Relevance(c.m, search.Evidence{Similarity: 0.2, HasVector: true, Keyword: 0.5}); !(hi > lo) {
				t.Errorf("%s: keyword 0.5 scores %v, not above 0.1's %v", c.name, hi, lo)
			}
		}
	}
}

// A hybrid search's message without a vector is judged on its keyword
// evidence, as keyword search judges it, not as similarity 0.
func TestRelevanceWithoutVector(t *testing.T) {
	for _, kw := range []float64{0.1, 0.45, 0.9} {
		got := search.Relevance(search.Hybrid, search.Evidence{Similarity: 0.9, Keyword: kw})
		want := search.Relevance(search.Keyword, search.Evidence{Keyword: kw})
		if got != want {
			t.Errorf("keyword %v without a vector: %v, want keyword search's %v", kw, got, want)
		}
	}
}

// Nothing relevant by either side is below the default floor; a message
// matching all of a query's words, or very close in meaning, is above.
func TestDefaultFloor(t *testing.T) {
	if f := search.DefaultFloor; !(f > 0 && f < 1) {
		t.Fatalf("DefaultFloor %v outside (0,1)", f)
	}
	for _, m := range modes {
		if r := search.Relevance(m, search.Evidence{Similarity: 0.05, HasVector: true}); search.Kept(r, search.DefaultFloor) {
			t.Errorf("mode %d: similarity 0.05 and no keyword kept (%v)", m, r)
		}
	}
	full := search.KeywordEvidence(2, 2) // every term once, average length
	for _, c := range []struct {
		m  search.Mode
		ev search.Evidence
	}{
		{search.Keyword, search.Evidence{Keyword: full}},
		{search.Hybrid, search.Evidence{Keyword: full}},
		{search.Hybrid, search.Evidence{Similarity: 0.3, HasVector: true, Keyword: full}},
		{search.Semantic, search.Evidence{Similarity: 0.8, HasVector: true}},
		{search.Hybrid, search.Evidence{Similarity: 0.8, HasVector: true}},
	} {
		if r := search.Relevance(c.m, c.ev); !search.Kept(r, search.DefaultFloor) {
			t.Errorf("mode %d %+v: relevance %v below the floor", c.m, c.ev, r)
		}
	}
	if !search.Kept(0.3, 0.3) || search.Kept(0.29, 0.3) || !search.Kept(0, 0) {
		t.Error("Kept is not r >= floor")
	}
}

func TestKeywordEvidence(t *testing.T) {
	for _, c := range []struct{ bm25, mass, want float64 }{
		{0, 3, 0},
		{3, 0, 0},             // empty store
		{math.NaN(), 3, 0},    // no score
		{2.2 * 3, 3, 1},       // the most a query can score
		{100, 3, 1},           // clamped
		{3, 3, 1 / 2.2},       // every term once, average length
		{1.1, 1, 0.5},         // half the ceiling
		{2.2 * 1e-6, 1e-6, 1}, // frequent terms only: tiny but whole
	} {
		if got := search.KeywordEvidence(c.bm25, c.mass); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("KeywordEvidence(%v, %v) = %v, want %v", c.bm25, c.mass, got, c.want)
		}
	}
}

func TestBoost(t *testing.T) {
	for _, r := range []float64{0, 0.001, 0.2, 0.5, 0.9, 1} {
		for _, b := range []float64{0, 0.1, 0.3, 0.4} {
			got := search.Boost(r, b)
			if got < r || got > 1 {
				t.Errorf("Boost(%v, %v) = %v", r, b, got)
			}
			if b == 0 && got != r {
				t.Errorf("Boost(%v, 0) = %v", r, got)
			}
		}
	}
	if got := search.Boost(0.001, 0.4); got > 0.01 {
		t.Errorf("a boost made nothing into %v", got)
	}
	if a, b := search.Boost(0.45, 0.1), 0.5; !(a > b) {
		t.Errorf("boost 0.1 at 0.45 gives %v, not past 0.5", a)
	}
}

// The keyword share grows as the query's vector says less: a query of
// keywords, a question in words, a query of one or two terms.
func TestKeywordShare(t *testing.T) {
	for _, c := range []struct {
		query string
		want  float64
	}{
		{"python check if a variable is iterable", search.KeywordsKeywordShare},
		{"When did Caroline go to the support group?", search.QuestionKeywordShare},
		{"naïve", search.ShortKeywordShare},
		{"retry loop", search.ShortKeywordShare},
	} {
		if got := search.KeywordShare(c.query); got != c.want {
			t.Errorf("KeywordShare(%q) = %v, want %v", c.query, got, c.want)
		}
	}
}

// Weights.Final is the weighted sum with an exponential decay of the
// half-life (1 without one, future times as now), or the multiplicative
// formula; a listing's recency falls back to a week's half-life.
func TestWeightsFinal(t *testing.T) {
	week := 168 * time.Hour
	w := search.Weights{Similarity: 0.4, Recency: 0.1, Confidence: 0.5, HalfLife: 720 * time.Hour}
	if rec, fin := w.Final(0.5, 0.8, 720*time.Hour); math.Abs(rec-0.5) > 1e-12 || math.Abs(fin-(0.4*0.5+0.1*0.5+0.5*0.8)) > 1e-12 {
		t.Errorf("weighted: recency %v final %v", rec, fin)
	}
	if rec, _ := w.Final(1, 1, -time.Hour); rec != 1 {
		t.Errorf("future timestamp: recency %v, want 1", rec)
	}
	if rec, fin := (search.Weights{Similarity: 1}).Final(0.7, 0.1, week); rec != 1 || fin != 0.7 {
		t.Errorf("no decay: recency %v final %v", rec, fin)
	}
	m := search.Weights{Multiplicative: true}
	if rec, fin := m.Final(0.5, 0.8, 48*time.Hour); math.Abs(rec-0.95*0.95) > 1e-12 || math.Abs(fin-0.5*0.8*0.95*0.95) > 1e-12 {
		t.Errorf("multiplicative: recency %v final %v", rec, fin)
	}
	if got := (search.Weights{Similarity: 1}).ListingRecency(week); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("listing without decay: recency %v, want a week's half-life 0.5", got)
	}
	if got := m.ListingRecency(24 * time.Hour); math.Abs(got-0.95) > 1e-12 {
		t.Errorf("multiplicative listing: recency %v, want 0.95", got)
	}
}
