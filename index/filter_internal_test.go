package index

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// denseAllow is a bitset Allow for white-box tests.
type denseAllow struct {
	w    []uint64
	card uint64
}

func randomAllow(r *rand.Rand, n int, sel float64) *denseAllow {
	a := &denseAllow{w: make([]uint64, (n+63)/64)}
	for a.card < uint64(sel*float64(n)) {
		id := uint32(r.IntN(n))
		if !a.Contains(id) {
			a.w[id/64] |= 1 << (id % 64)
			a.card++
		}
	}
	return a
}

func (a *denseAllow) Contains(id uint32) bool {
	return int(id/64) < len(a.w) && a.w[id/64]&(1<<(id%64)) != 0
}
func (a *denseAllow) GetCardinality() uint64 { return a.card }
func (a *denseAllow) Iterate(fn func(uint32) bool) {
	for i, w := range a.w {
		for b := 0; w != 0; b++ {
			if w&1 != 0 && !fn(uint32(64*i+b)) {
				return
			}
			w >>= 1
		}
	}
}

// filterPaths runs both filtered paths for each query and reports p50
// latency (thread CPU time) of each and the graph path's recall@10.
func filterPaths(x *Index, queries [][]float32, allow Allow, ef int, twoHop bool) (exactP50, graphP50 time.Duration, recall float64, ndist int) {
	var le, lg []time.Duration
	hit := 0
	for _, q := range queries {
		s := x.getScratch(len(x.mu.state))
		x.mu.RLock()
		t0 := threadCPU()
		want := x.exactLocked(s, q, 10, allow)
		le = append(le, threadCPU()-t0)
		s.ndist = 0
		t0 = threadCPU()
		x.searchModeLocked(s, q, ef, allow, twoHop)
		got := toResults(s.res.drainSorted(s.w[:0]), 10)
		lg = append(lg, threadCPU()-t0)
		ndist += s.ndist
		x.mu.RUnlock()
		x.putScratch(s)
		for _, g := range got {
			for _, w := range want {
				if g.ID == w.ID {
					hit++
				}
			}
		}
	}
	slices.Sort(le)
	slices.Sort(lg)
	return le[len(le)/2], lg[len(lg)/2], float64(hit) / float64(10*len(queries)), ndist / len(queries)
}

// TestFilteredPaths forces each filtered graph walk at the selectivities
// where Search uses it and checks recall@10 against the exact filtered
// scan (Search itself would scan exactly at this size).
func TestFilteredPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	n, dim := 6000, 32
	if raceEnabled {
		n = 2500
	}
	x, err := New(Options{Dim: dim, Space: Cosine, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]uint32, n)
	vecs := make([][]float32, n+100)
	for i := range vecs {
		c := float64(i % 37)
		vecs[i] = make([]float32, dim)
		for j := range vecs[i] {
			vecs[i][j] = float32(math.Sin(c*float64(j+1)) + 0.4*r.NormFloat64())
		}
	}
	for i := range ids {
		ids[i] = uint32(i)
	}
	if err := x.InsertBatch(context.Background(), ids, vecs[:n]); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := x.Check(); err != nil {
			t.Error(err)
		}
	})
	queries := make([][]float32, 100)
	for i := range queries {
		queries[i], _ = x.prepare(vecs[n+i], true)
	}
	for _, c := range []struct {
		sel    float64
		twoHop bool
	}{{0.5, false}, {0.3, false}, {0.3, true}, {0.1, true}, {0.05, true}} {
		allow := randomAllow(r, n, c.sel)
		_, _, rec, _ := filterPaths(x, queries, allow, 100, c.twoHop)
		if rec < 0.95 {
			t.Errorf("selectivity %g two-hop %v: recall@10 %.3f, want >= 0.95", c.sel, c.twoHop, rec)
		}
		// Nothing outside the allowed set comes back.
		res, err := x.Search(vecs[n], 10, SearchOptions{Allow: allow})
		if err != nil {
			t.Fatal(err)
		}
		for _, rr := range res {
			if !allow.Contains(rr.ID) {
				t.Fatalf("id %d not allowed", rr.ID)
			}
		}
	}
}
