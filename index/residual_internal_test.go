package index

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFillCentroidDots: the batched pass gives every centroid's dot
// exactly as the lazy one computes it (the kernels are tested equal), and
// its nearest centroid is the exact (float64) nearest one.
func TestFillCentroidDots(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const dim = 40
	vecs := make([][]float32, trainAt+100)
	for i := range vecs {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		vecs[i] = v
	}
	kernels := []kernel{genericKernel, bestKernel()}
	if raceEnabled { // the parallel training is the same for both; the kernels' sums are checked without -race
		kernels = kernels[1:]
	}
	for _, k := range kernels {
		o, _ := Options{Dim: dim, Space: L2, Code: SQ8Residual, Workers: 2}.withDefaults()
		x := newIndex(o, k)
		x.trainLocked(vecs[:trainAt])
		if len(x.mu.halfNorm) != residualCentroids {
			t.Fatalf("%s: %d centroids after training", k.name, len(x.mu.halfNorm))
		}
		if x.mu.centroidCodes == nil {
			t.Fatalf("%s: a trained table has no exact 8-bit codes", k.name)
		}
		for _, v := range vecs[trainAt:] {
			var full, lazy centroidDots
			full.reset()
			lazy.reset()
			var sum float32
			for _, f := range v {
				sum += f
			}
			got := x.fillCentroidDots(query{v: v, sum: sum, qc: &full})
			ql := query{v: v, sum: sum, qc: &lazy}
			best, bd := -1, math.Inf(1)
			for c := range residualCentroids {
				if d := x.centroidDot(ql, c); d != full.vals[c] {
					t.Fatalf("%s: centroid %d: batched dot %v, lazy %v", k.name, c, full.vals[c], d)
				}
				// The 8-bit form's dot is the float table's to rounding.
				if f := k.dot(v, x.mu.centroids[c*dim:(c+1)*dim]); math.Abs(float64(f-full.vals[c])) > 1e-5*(1+math.Abs(float64(f))) {
					t.Fatalf("%s: centroid %d: dot from codes %v, from floats %v", k.name, c, full.vals[c], f)
				}
				var l2 float64
				for i, f := range v {
					e := float64(f) - float64(x.mu.centroids[c*dim+i])
					l2 += e * e
				}
				if l2 < bd {
					best, bd = c, l2
				}
			}
			if got != best {
				// Only a float32 near-tie may differ.
				var l2 float64
				for i, f := range v {
					e := float64(f) - float64(x.mu.centroids[got*dim+i])
					l2 += e * e
				}
				if l2-bd > 1e-4*bd {
					t.Fatalf("%s: nearest centroid %d (%g), exact %d (%g)", k.name, got, l2, best, bd)
				}
			}
			full.reset() // a full set resets to all NaN
			for c, d := range full.vals {
				if d == d {
					t.Fatalf("%s: centroid %d's dot survives reset", k.name, c)
				}
			}
		}
	}
}

// TestSQ8ResidualCodesInsertOnce: an insert's row is coded against the
// nearest centroid (what the build's batched pass picks equals a fresh
// nearestCentroid).
func TestSQ8ResidualCodesInsertOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("single-goroutine coding checks: the detector watches the parallel sq8r build in TestSQ8Residual")
	}
	r := rand.New(rand.NewPCG(7, 8))
	const dim, n = 24, trainAt + 500
	ids := make([]uint32, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		ids[i] = uint32(i)
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		vecs[i] = v
	}
	x, err := New(Options{Dim: dim, Space: Cosine, Code: SQ8Residual, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.InsertBatch(context.Background(), ids, vecs); err != nil {
		t.Fatal(err)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	for i, v := range vecs {
		p, _ := x.prepare(v, true)
		if got, want := x.centroidOf(x.rowLocked(uint32(i))), x.nearestCentroid(p); got != want {
			t.Fatalf("id %d: row's centroid %d, nearest %d", i, got, want)
		}
	}
}

// TestCentroidCodesExact: a quantized table always has exact 8-bit codes
// (coding a decoded centroid again may move its step by a unit in the last
// place, which exactCodes undoes), and a table that is not 8-bit has none,
// so q·centroid is computed from the floats.
func TestCentroidCodesExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	trials := 8
	if raceEnabled { // single-goroutine arithmetic: the run without -race tries all 8
		trials = 2
	}
	for _, dim := range []int{1, 8, 384} {
		for trial := range trials {
			cent := make([]float32, 1024*dim)
			for i := range cent {
				cent[i] = float32(r.NormFloat64() * 0.05)
			}
			raw := slices.Clone(cent)
			quantizeCentroids(cent, dim)
			codes := exactCodes(cent, dim)
			if codes == nil {
				t.Fatalf("dim %d trial %d: a quantized table has no exact codes", dim, trial)
			}
			dec := make([]float32, dim)
			for k := range 1024 {
				decodeSQ8(dec, codes[k*sq8Stride(dim):])
				if !slices.Equal(dec, cent[k*dim:(k+1)*dim]) {
					t.Fatalf("dim %d: centroid %d's codes decode to another vector", dim, k)
				}
			}
			if dim > 2 && exactCodes(raw, dim) != nil {
				t.Fatalf("dim %d: codes for a table that is not 8-bit", dim)
			}
		}
	}
}
