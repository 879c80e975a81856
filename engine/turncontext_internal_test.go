package engine

import (
	"math"
	"testing"
)

// Without a neighbour a candidate fuses with its own similarity, negative
// included (clamping it would change the min-max range of every search);
// with one, with the larger of its own and contextWeight times the pair's.
func TestFusionSim(t *testing.T) {
	alone := &candidate{sim: -0.2, hasSim: true}
	if got := alone.fusionSim(); got != -0.2 {
		t.Errorf("no neighbour: fusionSim %v, want the own similarity -0.2", got)
	}
	c := &candidate{sim: 0.3, hasSim: true}
	c.setContext(0.5)
	c.setContext(0.4) // a worse pair does not lower it
	if got, want := c.fusionSim(), contextWeight*0.5; math.Abs(got-want) > 1e-12 {
		t.Errorf("with context 0.5: fusionSim %v, want %v", got, want)
	}
	low := &candidate{sim: 0.6, hasSim: true}
	low.setContext(0.5)
	if got := low.fusionSim(); got != 0.6 {
		t.Errorf("own similarity above the context's: fusionSim %v, want 0.6", got)
	}
}

// The pair similarity is the cosine of q with a + b.
func TestPairSimilarity(t *testing.T) {
	q := []float32{1, 0, 0}
	a := []float32{1, 0, 0}
	b := []float32{0, 1, 0}
	if got, want := pairSimilarity(q, a, b), 1/math.Sqrt2; math.Abs(got-want) > 1e-9 {
		t.Errorf("pairSimilarity = %v, want %v", got, want)
	}
	if got := pairSimilarity(q, a, []float32{1, 0}); got != 0 {
		t.Errorf("dimension mismatch: %v, want 0", got)
	}
}
