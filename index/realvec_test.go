package index_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/index"
)

// minilmVectors reads testdata/minilm-256x384.f32: 256 real
// all-MiniLM-L6-v2 embeddings (192 documents: 64 LoCoMo turns, 64
// Cranfield abstracts, 64 CoSQA code snippets; then 64 queries: 32
// Cranfield, 32 CoSQA), made with `cairn embed --model minilm-fp32 --json`
// as described in testdata/README.md. Layout: uint32 n, uint32 dim, then
// n*dim float32, little endian.
func minilmVectors(t testing.TB) (docs, queries [][]float32) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "minilm-256x384.f32"))
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	n, dim := int(le.Uint32(b)), int(le.Uint32(b[4:]))
	if len(b) != 8+4*n*dim {
		t.Fatalf("fixture: %d bytes for %d x %d", len(b), n, dim)
	}
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = make([]float32, dim)
		for j := range vecs[i] {
			vecs[i][j] = math.Float32frombits(le.Uint32(b[8+4*(i*dim+j):]))
		}
	}
	return vecs[:192], vecs[192:]
}

// TestSQ8RealVectors compares the SQ8 index's distances with the exact
// float32 distances on real model embeddings, and its exact ranking with
// the float32 ranking. The bounds are about twice what was measured on
// 3,686 documents and 425 queries of the same sets (mean |error| 2.7e-4,
// max 1.8e-3, recall@10 of the SQ8 ranking 0.996).
func TestSQ8RealVectors(t *testing.T) {
	docs, queries := minilmVectors(t)
	for _, space := range []index.Space{index.Cosine, index.L2, index.IP} {
		x := newChecked(t, index.Options{Dim: 384, Space: space, Code: index.SQ8, Seed: 1, Workers: 1})
		for i, v := range docs {
			if err := x.Insert(uint32(i), v); err != nil {
				t.Fatal(err)
			}
		}
		var sum, worst float64
		hit, count := 0, 0
		for _, q := range append(slices.Clone(queries), docs[:32]...) {
			got, err := x.Exact(q, len(docs), nil)
			if err != nil {
				t.Fatal(err)
			}
			exact := make([]index.Result, len(docs))
			for i, d := range docs {
				exact[i] = index.Result{ID: uint32(i), Distance: index.Distance(space, q, d)}
				if space == index.IP {
					exact[i].Distance = 1 - dot(q, d)
				}
			}
			for _, r := range got {
				e := float64(exact[r.ID].Distance - r.Distance)
				sum += math.Abs(e)
				worst = max(worst, math.Abs(e))
				count++
			}
			slices.SortFunc(exact, func(a, b index.Result) int {
				if a.Distance < b.Distance {
					return -1
				}
				if a.Distance > b.Distance {
					return 1
				}
				return int(a.ID) - int(b.ID)
			})
			for _, r := range got[:10] {
				if slices.ContainsFunc(exact[:10], func(e index.Result) bool { return e.ID == r.ID }) {
					hit++
				}
			}
		}
		mean := sum / float64(count)
		recall := float64(hit) / float64(10*(len(queries)+32))
		t.Logf("%v: |distance error| mean %.2e max %.2e, recall@10 of the SQ8 ranking %.4f", space, mean, worst, recall)
		scale := 1.0
		if space == index.L2 {
			scale = 2 // |q-x|² = 2 - 2cos on unit vectors: errors double
		}
		if mean > 6e-4*scale || worst > 4e-3*scale || recall < 0.98 {
			t.Errorf("%v: |distance error| mean %.2e max %.2e, recall@10 %.4f", space, mean, worst, recall)
		}
	}
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
