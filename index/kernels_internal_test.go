package index

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestKernelsAgree runs every kernel this CPU supports (and the portable
// one, which the purego tag makes the only one) against a float64
// reference, at the tuned dimensions and at every tail length.
func TestKernelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	dims := []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 384, 768, 1000, 1536}
	for _, k := range kernels() {
		t.Run(k.name, func(t *testing.T) {
			for _, n := range dims {
				a, b := make([]float32, n), make([]float32, n+3)
				for i := range a {
					a[i] = float32(r.NormFloat64())
				}
				for i := range b {
					b[i] = float32(r.NormFloat64())
				}
				var dot, l2, scale float64
				for i := range a {
					dot += float64(a[i]) * float64(b[i])
					d := float64(a[i]) - float64(b[i])
					l2 += d * d
					scale += math.Abs(float64(a[i]) * float64(b[i]))
				}
				tol := 1e-5 * (scale + 1)
				if got := k.dot(a, b); math.Abs(float64(got)-dot) > tol {
					t.Errorf("dim %d: dot = %v, want %v", n, got, dot)
				}
				if got := k.l2(a, b); math.Abs(float64(got)-l2) > 1e-5*(l2+1) {
					t.Errorf("dim %d: l2 = %v, want %v", n, got, l2)
				}
			}
		})
	}
}

// TestIndexPerKernel builds the same small index with each kernel and
// checks that searches agree with the exact oracle.
func TestIndexPerKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n, dim := 800, 40
	if raceEnabled {
		n = 300
	}
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = make([]float32, dim)
		for j := range vecs[i] {
			vecs[i][j] = float32(r.NormFloat64())
		}
	}
	for _, k := range kernels() {
		for _, sp := range []Space{Cosine, L2, IP} {
			for _, code := range []Code{Float32, SQ8} {
				checkKernelIndex(t, k, sp, code, vecs)
			}
		}
	}
}

func checkKernelIndex(t *testing.T, k kernel, sp Space, code Code, vecs [][]float32) {
	dim := len(vecs[0])
	o, _ := Options{Dim: dim, Space: sp, Workers: 1, Code: code}.withDefaults()
	x := newIndex(o, k)
	for i, v := range vecs {
		if err := x.Insert(uint32(i), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Check(); err != nil {
		t.Fatal(err)
	}
	hit := 0
	for _, q := range vecs[:50] {
		got, _ := x.Search(q, 10, SearchOptions{})
		want, _ := x.Exact(q, 10, nil)
		ids := map[uint32]bool{}
		for _, w := range want {
			ids[w.ID] = true
		}
		for _, g := range got {
			if ids[g.ID] {
				hit++
			}
		}
	}
	if rec := float64(hit) / 500; rec < 0.95 {
		t.Errorf("kernel %s space %v code %v: recall %.3f", k.name, sp, code, rec)
	}
}

// TestBatchKernelsAgree checks that each kernel's batch form returns
// exactly what its single form returns.
func TestBatchKernelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range kernels() {
		for _, dim := range []int{1, 5, 8, 13, 16, 24, 40, 64, 100, 384, 768} {
			const rows = 50
			vecs := make([]float32, rows*dim)
			for i := range vecs {
				vecs[i] = float32(r.NormFloat64())
			}
			q := vecs[3*dim : 4*dim]
			ids := []uint32{0, 49, 7, 7, 3, 20}
			out := make([]float32, len(ids))
			k.dotBatch(q, vecs, dim, ids, out)
			for i, id := range ids {
				if want := k.dot(q, vecs[int(id)*dim:]); out[i] != want {
					t.Errorf("%s dim %d: dotBatch[%d] = %v, dot = %v", k.name, dim, i, out[i], want)
				}
			}
			k.l2Batch(q, vecs, dim, ids, out)
			for i, id := range ids {
				if want := k.l2(q, vecs[int(id)*dim:]); out[i] != want {
					t.Errorf("%s dim %d: l2Batch[%d] = %v, l2 = %v", k.name, dim, i, out[i], want)
				}
			}
			k.dotBatch(q, vecs, dim, nil, out)
		}
	}
}
