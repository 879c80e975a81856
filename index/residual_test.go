package index_test

import (
	"context"
	"math"
	"testing"

	"github.com/cairn-dev/cairn/index"
)

// TestSQ8Residual: in every space, a search's distances are the space's
// distance to the vector Vector decodes (the residual code's distance
// formula agrees with its decoding), decoded vectors are within a few
// steps of what was inserted, and recall against the exact scan holds;
// recoding a float32 index gives the same properties.
func TestSQ8Residual(t *testing.T) {
	r := testRand(t)
	const n, dim = 6000, 48
	vecs := clustered(r, n, dim, 40, 0.3)
	queries := clustered(r, 50, dim, 40, 0.3)
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = uint32(i)
	}
	for _, space := range []index.Space{index.Cosine, index.L2, index.IP} {
		for _, recode := range []bool{false, true} {
			code := index.SQ8Residual
			if recode {
				code = index.Float32
			}
			x := newChecked(t, index.Options{Space: space, Dim: dim, Code: code, Seed: 3, Workers: 2})
			if err := x.InsertBatch(context.Background(), ids, vecs); err != nil {
				t.Fatal(err)
			}
			if recode {
				if err := x.Recode(index.SQ8Residual); err != nil {
					t.Fatal(err)
				}
			}
			var maxErr float64
			for id := range n {
				v, ok := x.Vector(uint32(id))
				if !ok {
					t.Fatalf("%v: %d not live", space, id)
				}
				for i := range v {
					maxErr = max(maxErr, math.Abs(float64(v[i]-vecs[id][i])))
				}
			}
			if maxErr > 0.01 {
				t.Errorf("%v recode=%v: decoded vectors off by up to %g", space, recode, maxErr)
			}
			for _, q := range queries {
				rs, err := x.Search(q, 10, index.SearchOptions{Ef: 100})
				if err != nil {
					t.Fatal(err)
				}
				for _, res := range rs {
					v, _ := x.Vector(res.ID)
					if want := spaceDist(space, q, v); math.Abs(float64(res.Distance-want)) > 1e-4 {
						t.Fatalf("%v recode=%v: distance to %d = %g, decoded vector gives %g", space, recode, res.ID, res.Distance, want)
					}
				}
			}
			if recall := recallAt(t, x, queries, 10, index.SearchOptions{Ef: 100}); recall < 0.95 {
				t.Errorf("%v recode=%v: recall@10 %.3f below 0.95", space, recode, recall)
			}
		}
	}
}

func spaceDist(space index.Space, q, v []float32) float32 {
	var dot, l2, qq float64
	for i := range q {
		dot += float64(q[i]) * float64(v[i])
		d := float64(q[i] - v[i])
		l2 += d * d
		qq += float64(q[i]) * float64(q[i])
	}
	switch space {
	case index.Cosine:
		return float32(1 - dot/math.Sqrt(qq))
	case index.L2:
		return float32(l2)
	}
	return float32(1 - dot)
}
