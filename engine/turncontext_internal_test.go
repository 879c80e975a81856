package engine

import (
	"math"
	"testing"
)

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
