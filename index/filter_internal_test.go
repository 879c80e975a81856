package index

import (
	"math/rand/v2"
	"slices"
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
func filterPaths(x *Index, queries [][]float32, allow Allow, ef int) (exactP50, graphP50 time.Duration, recall float64, ndist int) {
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
		x.searchLocked(s, q, ef, allow)
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
