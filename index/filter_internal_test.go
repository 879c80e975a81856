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

// filterPaths runs the exact scan and the graph walk for each query and reports p50
// latency (thread CPU time) of each and the graph path's recall@10.
func filterPaths(x *Index, queries [][]float32, allow Allow, ef int) (exactP50, graphP50 time.Duration, recall float64, ndist int) {
	var le, lg []time.Duration
	hit := 0
	for _, q := range queries {
		s := x.getScratch(len(x.mu.state))
		x.mu.RLock()
		t0 := threadCPU()
		want := x.exactLocked(s, x.newQuery(q), 10, allow)
		le = append(le, threadCPU()-t0)
		s.ndist = 0
		t0 = threadCPU()
		x.searchLocked(s, x.newQuery(q), ef, allow)
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

// TestFilteredPaths forces the filtered graph walk at selectivities where
// Search uses it and checks recall@10 against the exact filtered scan
// (Search itself would scan exactly at this size).
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
	for _, sel := range []float64{0.5, 0.3, 0.2} {
		allow := randomAllow(r, n, sel)
		_, _, rec, _ := filterPaths(x, queries, allow, 100)
		if rec < 0.95 {
			t.Errorf("selectivity %g: recall@10 %.3f, want >= 0.95", sel, rec)
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

// TestExactParallelMatchesSerial: the exact scan split across goroutines
// returns what the one-goroutine scan returns, with and without a filter,
// with deleted vectors in the way, in every space.
func TestExactParallelMatchesSerial(t *testing.T) {
	spaces := []Space{Cosine, L2, IP}
	if raceEnabled { // the split is the same for every space; the build of 24,576 vectors is what costs
		spaces = spaces[:1]
	}
	for _, sp := range spaces {
		t.Run(sp.String(), func(t *testing.T) {
			const n, dim = 3 * parallelExactMin, 8
			x, err := New(Options{Space: sp, Dim: dim, M: 4, EfConstruction: 16, Workers: 3, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(11, uint64(sp)))
			ids := make([]uint32, n)
			vecs := make([][]float32, n)
			for i := range ids {
				ids[i] = uint32(i)
				vecs[i] = make([]float32, dim)
				for j := range vecs[i] {
					// Few distinct values: many ties, which must break by id alike.
					vecs[i][j] = float32(r.IntN(4))
				}
				vecs[i][0] += 0.5
			}
			if err := x.InsertBatch(context.Background(), ids, vecs); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i += 7 {
				if err := x.Delete(uint32(i)); err != nil {
					t.Fatal(err)
				}
			}
			t.Cleanup(func() {
				if err := x.Check(); err != nil {
					t.Error(err)
				}
			})
			allows := []Allow{nil, randomAllow(r, n, 0.5), randomAllow(r, n, float64(parallelExactMin)/n)}
			for ai, allow := range allows {
				for qi := 0; qi < 20; qi++ {
					q := vecs[r.IntN(n)]
					for _, k := range []int{1, 10, 100} {
						s := x.getScratch(len(x.mu.state))
						x.mu.RLock()
						serial := x.exactLockedSerialForTest(s, q, k, allow)
						par := x.exactParallelLocked(s, x.newQuery(q), k, allow, 3)
						x.mu.RUnlock()
						x.putScratch(s)
						if !slices.Equal(serial, par) {
							t.Fatalf("allow %d, query %d, k %d: parallel %v, serial %v", ai, qi, k, par[:min(3, len(par))], serial[:min(3, len(serial))])
						}
					}
				}
			}
		})
	}
}

// exactLockedSerialForTest runs exactLocked with the parallel split off.
func (x *Index) exactLockedSerialForTest(s *scratch, q []float32, k int, allow Allow) []Result {
	w := x.opts.Workers
	x.opts.Workers = 1
	defer func() { x.opts.Workers = w }()
	return x.exactLocked(s, x.newQuery(q), k, allow)
}
