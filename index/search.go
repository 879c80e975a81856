package index

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Allow is a set of ids a filtered search may return. *roaring.Bitmap
// satisfies it. The set is only read, and may be read by several searches
// at once if the implementation allows concurrent reads.
type Allow interface {
	Contains(id uint32) bool
	GetCardinality() uint64
	Iterate(fn func(id uint32) bool)
}

// SearchOptions tune one search.
type SearchOptions struct {
	// Ef is the candidate list size; 0 means Options.EfSearch. It is raised
	// to k when smaller.
	Ef int
	// Allow, when not nil, restricts results to its ids.
	Allow Allow
}

// Result is one neighbour: its id and its distance to the query.
type Result struct {
	ID       uint32
	Distance float32
}

// scratch holds per-search buffers, pooled in Index.scratch.
type scratch struct {
	marks []uint32 // visited generation per slot
	gen   uint32
	cands minHeap
	res   maxHeap
	w     []cand // sorted layer results
	seeds []cand
	sel   []cand
	buf   []cand
	q     []float32
	ids   []uint32
	ndist int // distance evaluations in searchLayerLocked, for benchmarks
	dists []float32
	tmp   []cand
	hop   []uint32 // repair: the deleted nodes next to a node
	all   []uint32 // ids of a parallel exact scan
	// The decoded base of a list being shrunk or repaired (codes).
	vBase []float32
	// kept: the heuristic's decoded kept candidates (m*dim), as queries
	// in keptQ (their centroid dots in keptQC); vEnc: an sq8r residual
	// being coded.
	kept, vEnc []float32
	keptQ      []query
	keptQC     []centroidDots
	// Centroid dots (SQ8Residual) of an insert's query and of vBase.
	qcQuery, qcBase centroidDots
}

// vec returns *p resized to n floats.
func vec(p *[]float32, n int) []float32 {
	if cap(*p) < n {
		*p = make([]float32, n)
	}
	return (*p)[:n]
}

func (x *Index) getScratch(slots int) *scratch {
	s, _ := x.scratch.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if len(s.marks) < slots {
		s.marks = make([]uint32, slots+slots/4)
		s.gen = 0
	}
	return s
}

func (x *Index) putScratch(s *scratch) { x.scratch.Put(s) }

// ensure gives s.ids capacity and s.dists length of at least n.
func (s *scratch) ensure(n int) {
	if cap(s.ids) < n || len(s.dists) < n {
		n = max(n, cap(s.ids), len(s.dists))
		s.ids = make([]uint32, 0, n)
		s.dists = make([]float32, n)
	}
}

// nextGen starts a new visited set.
func (s *scratch) nextGen() uint32 {
	s.gen++
	if s.gen == 0 {
		clear(s.marks)
		s.gen = 1
	}
	return s.gen
}

// Search returns up to k live vectors nearest to q, closest first. With
// opts.Allow it returns only allowed ids: a small allowed set is scanned
// exactly, a large one is searched in the graph, which keeps walking
// through disallowed nodes until it has Ef allowed candidates.
func (x *Index) Search(q []float32, k int, opts SearchOptions) ([]Result, error) {
	if len(q) != x.dim {
		return nil, fmt.Errorf("%w: query has %d, want %d", ErrDimensionMismatch, len(q), x.dim)
	}
	if k <= 0 {
		return nil, nil
	}
	ef := opts.Ef
	if ef <= 0 {
		ef = x.opts.EfSearch
	}
	ef = max(ef, k)
	x.mu.RLock()
	defer x.mu.RUnlock()
	s := x.getScratch(len(x.mu.state))
	defer x.putScratch(s)
	qv, err := x.prepareQuery(s, q)
	if err != nil {
		return nil, err
	}
	qq := x.newQuery(qv)
	live := x.live.Load()
	if live == 0 {
		return nil, nil
	}
	if opts.Allow != nil {
		card := opts.Allow.GetCardinality()
		if card == 0 {
			return nil, nil
		}
		var exact bool
		if exact, ef = PlanFiltered(int(card), int(live), ef, x.opts.Workers); exact {
			return x.exactLocked(s, qq, k, opts.Allow), nil
		}
	} else if live <= int64(ef) {
		return x.exactLocked(s, qq, k, nil), nil
	}
	x.searchLocked(s, qq, ef, opts.Allow)
	return toResults(s.res.drainSorted(s.w[:0]), k), nil
}

// Filtered search plan, by selectivity (allowed ids / live vectors). Below
// exactSelectivity (or with at most exactMinCard allowed ids) the allowed
// ids are scanned exactly; above it the graph is walked as without a
// filter, disallowed nodes expanded but never returned, until the beam
// holds ef allowed nodes. Measured at 100,000 x 384, ef 100, k 10, on
// bench/'s easy (clustered) and hard (overlapping clusters, where even the
// unfiltered recall@10 is 0.965) data sets, p50 wall µs and recall@10
// (`go run ./bench/cmd/indexbench -datasets easy,hard -peers cairn -sels ...`):
//
//	selectivity        12%          20%          25%          30%          50%
//	exact, 1 core      ~1100        ~1800        ~2250        ~2700        -
//	exact, 2 cores     ~550         ~900         ~1100        -            -
//	plain walk easy    883 / 1.000  585 / 1.000  579 / 1.000  468 / 1.000  372 / 1.000
//	plain walk hard    1501 / .938  791 / .944   856 / .945   654 / .953   528 / .964
//	two-hop walk hard  1813 / .949  1206 / .946  1298 / .955  1162 / .959  -
//
// The exact scan is memory-bound (45 µs per 1% on two cores, 90 on one),
// so its share grows with the cores it can use; an ACORN-1 style two-hop
// walk (only allowed nodes evaluated, the beam widened to keep recall) was
// measured and lost to one of the other two at every selectivity, so it
// is not used. Below widenBelow the walk's beam is widened by
// sqrt(widenBelow / selectivity), which brings the hard set back to its
// unfiltered recall (20% 0.964 / 1403 µs, 25% 0.957 / 1013, 30% 0.960 /
// 708, 40% 0.963 / 462; easy 1.000 throughout).
const (
	widenBelow               = 0.5
	exactSelectivitySerial   = 0.17
	exactSelectivityParallel = 0.25
	exactMinCard             = 4096
)

// PlanFiltered is Search's plan for a filter allowing card of live
// vectors at candidate list size ef, for an index searching with workers
// goroutines: whether to scan the allowed ids exactly, and otherwise the
// ef the filtered walk uses (widened at low selectivity). A View's caller
// follows the same plan, so that a search in place chooses as Search does.
func PlanFiltered(card, live, ef, workers int) (exact bool, walkEf int) {
	sel := float64(card) / float64(max(live, 1))
	exactSel := exactSelectivitySerial
	if min(workers, runtime.GOMAXPROCS(0)) > 1 {
		exactSel = exactSelectivityParallel
	}
	if card <= exactMinCard || card <= 4*ef || sel < exactSel {
		return true, ef
	}
	if sel < widenBelow {
		ef = int(float64(ef) * math.Sqrt(widenBelow/sel))
	}
	return false, ef
}

// prepareQuery validates q and returns it, normalized for cosine.
func (x *Index) prepareQuery(s *scratch, q []float32) ([]float32, error) {
	if !x.norm {
		if _, err := x.prepare(q, false); err != nil {
			return nil, err
		}
		return q, nil
	}
	v, err := x.prepare(q, false)
	if err != nil {
		return nil, err
	}
	s.q = append(s.q[:0], v...)
	return s.q, nil
}

func toResults(c []cand, k int) []Result {
	if len(c) > k {
		c = c[:k]
	}
	out := make([]Result, len(c))
	for i, r := range c {
		out[i] = Result{ID: r.id, Distance: r.d}
	}
	return out
}

// searchLocked walks the graph from the entry point and leaves the ef best
// accepted candidates in s.res.
// REQUIRES: x.mu held shared.
func (x *Index) searchLocked(s *scratch, q query, ef int, allow Allow) {
	s.res = s.res[:0]
	ep, top, ok := x.entryPoint()
	if !ok {
		return
	}
	d := x.distLocked(q, ep)
	for l := top; l > 0; l-- {
		ep, d = x.greedyLocked(q, ep, d, l)
	}
	s.seeds = append(s.seeds[:0], cand{d, ep})
	x.searchLayerLocked(s, q, s.seeds, ef, 0, allow, false)
}

// greedyLocked descends layer from ep to a local minimum (ef = 1).
// REQUIRES: x.mu held.
func (x *Index) greedyLocked(q query, ep uint32, d float32, layer int) (uint32, float32) {
	for changed := true; changed; {
		changed = false
		blk := x.listLocked(ep, layer)
		n := min(int(atomic.LoadUint32(&blk[0])), len(blk)-1)
		for i := 1; i <= n; i++ {
			nb := atomic.LoadUint32(&blk[i])
			if dn := x.distLocked(q, nb); dn < d {
				ep, d, changed = nb, dn, true
			}
		}
	}
	return ep, d
}

// searchLayerLocked is the paper's Algorithm 2 at one layer, from seeds. It
// leaves the ef best accepted nodes in s.res. A node is accepted when it is
// live and allowed (construct: when it is in the graph at all); rejected
// nodes are still expanded, so a filtered search walks through them.
// REQUIRES: x.mu held.
func (x *Index) searchLayerLocked(s *scratch, q query, seeds []cand, ef, layer int, allow Allow, construct bool) {
	gen := s.nextGen()
	marks := s.marks
	states := x.mu.state
	s.cands = s.cands[:0]
	s.res = s.res[:0]
	for _, c := range seeds {
		if marks[c.id] == gen {
			continue
		}
		marks[c.id] = gen
		s.cands.push(c)
		if construct || x.accept(states, c.id, allow) {
			s.res.push(c)
		}
	}
	for len(s.res) > ef {
		s.res.pop()
	}
	s.ensure(x.m0)
	for len(s.cands) > 0 {
		c := s.cands.pop()
		if len(s.res) >= ef && c.d > s.res[0].d {
			break
		}
		if len(s.cands) > 0 {
			// The next expansion's list, while this one is processed.
			prefetch(&x.listLocked(s.cands[0].id, layer)[0])
		}
		// Gather the unvisited neighbours, then compute their distances in
		// one kernel call that prefetches each next vector.
		blk := x.listLocked(c.id, layer)
		n := min(int(atomic.LoadUint32(&blk[0])), len(blk)-1)
		ids := s.ids[:0]
		for i := 1; i <= n; i++ {
			nb := atomic.LoadUint32(&blk[i])
			if marks[nb] != gen {
				marks[nb] = gen
				ids = append(ids, nb)
			}
		}
		if len(ids) == 0 {
			continue
		}
		s.ndist += len(ids)
		dists := s.dists[:len(ids)]
		x.distBatchLocked(q, ids, dists)
		for i, nb := range ids {
			d := dists[i]
			if len(s.res) < ef || d < s.res[0].d {
				s.cands.push(cand{d, nb})
				if construct || x.accept(states, nb, allow) {
					if len(s.res) < ef {
						s.res.push(cand{d, nb})
					} else {
						s.res.replaceTop(cand{d, nb})
					}
				}
			}
		}
	}
}

func (x *Index) accept(states []uint32, id uint32, allow Allow) bool {
	return atomic.LoadUint32(&states[id]) == stateLive && (allow == nil || allow.Contains(id))
}

// Exact returns the k live vectors nearest to q by scanning every vector
// (or, with allow, every allowed id). It is the oracle for Search and the
// path Search takes for small allowed sets.
func (x *Index) Exact(q []float32, k int, allow Allow) ([]Result, error) {
	if len(q) != x.dim {
		return nil, fmt.Errorf("%w: query has %d, want %d", ErrDimensionMismatch, len(q), x.dim)
	}
	if k <= 0 {
		return nil, nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	s := x.getScratch(0)
	defer x.putScratch(s)
	qv, err := x.prepareQuery(s, q)
	if err != nil {
		return nil, err
	}
	return x.exactLocked(s, x.newQuery(qv), k, allow), nil
}

// parallelExactMin is the number of ids from which an exact scan is split
// across Options.Workers goroutines. The scan is memory-bound (10,000
// vectors of 384 floats are 15 MB read per query, about 0.8 ms on one core
// here), and a second core brings its own bandwidth; below this size the
// goroutines' start and the merge cost more than they save. Measured at
// 100,000 x 384 (BenchmarkExact in bench_test.go).
const parallelExactMin = 8192

// exactLocked scans every live vector (or every allowed one) and returns
// the k nearest.
// REQUIRES: x.mu held shared.
func (x *Index) exactLocked(s *scratch, q query, k int, allow Allow) []Result {
	states := x.mu.state
	workers := min(x.opts.Workers, runtime.GOMAXPROCS(0))
	size := uint64(len(states))
	if allow != nil {
		size = allow.GetCardinality()
	}
	if workers > 1 && size >= parallelExactMin {
		return x.exactParallelLocked(s, q, k, allow, workers)
	}
	const chunk = 64
	s.ensure(chunk)
	h := s.res[:0]
	ids := s.ids[:0]
	consider := func(id uint32) {
		if atomic.LoadUint32(&states[id]) != stateLive {
			return
		}
		ids = append(ids, id)
		if len(ids) == chunk {
			h = x.scanInto(h, s.dists, q, k, ids)
			ids = ids[:0]
		}
	}
	if allow == nil {
		for id := range states {
			consider(uint32(id))
		}
	} else {
		n := uint32(len(states))
		allow.Iterate(func(id uint32) bool {
			if id < n {
				consider(id)
			}
			return true
		})
	}
	s.res = x.scanInto(h, s.dists, q, k, ids)
	return toResults(s.res.drainSorted(s.w[:0]), k)
}

// exactParallelLocked is exactLocked on several goroutines: the live
// (allowed) ids are collected, cut into one run per worker, each run keeps
// its own k best, and the runs' bests are merged.
// REQUIRES: x.mu held shared.
func (x *Index) exactParallelLocked(s *scratch, q query, k int, allow Allow, workers int) []Result {
	states := x.mu.state
	all := s.all[:0]
	if allow == nil {
		for id := range states {
			if atomic.LoadUint32(&states[id]) == stateLive {
				all = append(all, uint32(id))
			}
		}
	} else {
		n := uint32(len(states))
		allow.Iterate(func(id uint32) bool {
			if id < n && atomic.LoadUint32(&states[id]) == stateLive {
				all = append(all, id)
			}
			return true
		})
	}
	s.all = all
	workers = min(workers, max(1, len(all)/(parallelExactMin/2)))
	bests := make([]maxHeap, workers)
	var wg sync.WaitGroup
	per := (len(all) + workers - 1) / workers
	for w := range workers {
		run := all[min(w*per, len(all)):min((w+1)*per, len(all))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws := x.getScratch(0)
			defer x.putScratch(ws)
			const chunk = 256
			ws.ensure(chunk)
			h := maxHeap(make([]cand, 0, k))
			for len(run) > 0 {
				c := run[:min(chunk, len(run))]
				h = x.scanInto(h, ws.dists, q, k, c)
				run = run[len(c):]
			}
			bests[w] = h
		}()
	}
	wg.Wait()
	h := s.res[:0]
	for _, b := range bests {
		for _, c := range b {
			h.keep(c, k)
		}
	}
	s.res = h
	return toResults(s.res.drainSorted(s.w[:0]), k)
}

// scanInto computes the distances from q to ids (len(ids) <= len(dists))
// and keeps the k nearest in the max-heap h.
func (x *Index) scanInto(h maxHeap, dists []float32, q query, k int, ids []uint32) maxHeap {
	if len(ids) == 0 {
		return h
	}
	dists = dists[:len(ids)]
	x.distBatchLocked(q, ids, dists)
	for i, id := range ids {
		h.keep(cand{dists[i], id}, k)
	}
	return h
}

// sortCands orders c by distance, then id.
func sortCands(c []cand) {
	slices.SortFunc(c, func(a, b cand) int {
		if a.less(b) {
			return -1
		}
		if b.less(a) {
			return 1
		}
		return 0
	})
}
