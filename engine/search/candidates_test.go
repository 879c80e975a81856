package search_test

import (
	"math"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/engine/search"
)

// Without a neighbour a candidate fuses with its own similarity, negative
// included (clamping it would change the min-max range of every search);
// with one, with the larger of its own and ContextWeight times the pair's.
func TestFusionSimilarity(t *testing.T) {
	alone := &search.Candidate{Similarity: -0.2, HasSimilarity: true}
	if got := alone.FusionSimilarity(); got != -0.2 {
		t.Errorf("no neighbour: FusionSimilarity %v, want the own similarity -0.2", got)
	}
	c := &search.Candidate{Similarity: 0.3, HasSimilarity: true}
	c.SetContext(0.5)
	c.SetContext(0.4) // a worse pair does not lower it
	if got, want := c.FusionSimilarity(), search.ContextWeight*0.5; math.Abs(got-want) > 1e-12 {
		t.Errorf("with context 0.5: FusionSimilarity %v, want %v", got, want)
	}
	low := &search.Candidate{Similarity: 0.6, HasSimilarity: true}
	low.SetContext(0.5)
	if got := low.FusionSimilarity(); got != 0.6 {
		t.Errorf("own similarity above the context's: FusionSimilarity %v, want 0.6", got)
	}
}

// Best orders by score, ties by larger id, among the candidates the
// score accepts, at most n.
func TestCandidatesBest(t *testing.T) {
	cs := search.Candidates{1: {Fused: 0.5}, 2: {Fused: 0.9}, 3: {Fused: 0.5}, 4: {Fused: 0.7, Stale: true}}
	got := cs.Best(3, func(c *search.Candidate) (float64, bool) { return c.Fused, !c.Stale })
	if want := []int64{2, 3, 1}; !slices.Equal(got, want) {
		t.Errorf("best 3: %v, want %v", got, want)
	}
	if got := cs.Best(1, func(c *search.Candidate) (float64, bool) { return c.Fused, true }); !slices.Equal(got, []int64{2}) {
		t.Errorf("best 1: %v", got)
	}
}

// The rank blend changes nothing without a context similarity; with one,
// a candidate that ranks high on both lists leads, and the best possible
// blend is 1.
func TestBlendRanks(t *testing.T) {
	mk := func(context bool) search.Candidates {
		return search.Candidates{
			1: {Fused: 0.9, Similarity: 0.1, HasSimilarity: true},
			2: {Fused: 0.5, Similarity: 0.8, HasSimilarity: true, Context: 0.9, HasContext: context},
			3: {Fused: 0.6, Similarity: 0.7, HasSimilarity: true},
		}
	}
	semantic := func(cs search.Candidates) map[*search.Candidate]float64 {
		m := map[*search.Candidate]float64{}
		for _, c := range cs {
			m[c] = c.SemanticScore()
		}
		return m
	}
	cs := mk(false)
	search.BlendRanks(cs, semantic(cs), search.BlendSemanticWeight, search.BlendK)
	if cs[1].Fused != 0.9 || cs[2].Fused != 0.5 || cs[3].Fused != 0.6 {
		t.Errorf("without context: fused changed to %v %v %v", cs[1].Fused, cs[2].Fused, cs[3].Fused)
	}
	cs = mk(true)
	search.BlendRanks(cs, semantic(cs), search.BlendSemanticWeight, search.BlendK)
	// Fused ranks 1, 3, 2; semantic ranks 2, 3, 1.
	k, w := float64(search.BlendK), search.BlendSemanticWeight
	top := (1 + w) / (k + 1)
	want := map[int64]float64{1: (1/(k+1) + w/(k+3)) / top, 2: (1/(k+3) + w/(k+1)) / top, 3: (1/(k+2) + w/(k+2)) / top}
	for id, v := range want {
		if math.Abs(cs[id].Fused-v) > 1e-12 {
			t.Errorf("candidate %d: blend %v, want %v", id, cs[id].Fused, v)
		}
	}
}

// The pair similarity is the cosine of q with a + b.
func TestPairSimilarity(t *testing.T) {
	q := []float32{1, 0, 0}
	a := []float32{1, 0, 0}
	b := []float32{0, 1, 0}
	if got, want := search.PairSimilarity(q, a, b), 1/math.Sqrt2; math.Abs(got-want) > 1e-9 {
		t.Errorf("PairSimilarity = %v, want %v", got, want)
	}
	if got := search.PairSimilarity(q, a, []float32{1, 0}); got != 0 {
		t.Errorf("dimension mismatch: %v, want 0", got)
	}
}
