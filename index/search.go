package index

import (
	"fmt"
	"math"
	"slices"
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
	hop   []uint32
	tmp   []cand
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
	qq, err := x.prepareQuery(s, q)
	if err != nil {
		return nil, err
	}
	live := x.live.Load()
	if live == 0 {
		return nil, nil
	}
	twoHop := false
	if opts.Allow != nil {
		card := opts.Allow.GetCardinality()
		if card == 0 {
			return nil, nil
		}
		sel := float64(card) / float64(live)
		if card <= exactMinCard || card <= uint64(4*ef) || sel < exactSelectivity {
			return x.exactLocked(s, qq, k, opts.Allow), nil
		}
		twoHop = sel < twoHopSelectivity
		if twoHop {
			// The two-hop walk sees fewer allowed nodes per hop as the
			// allowed set thins; widen its beam to keep recall (measured on
			// the hard data set of bench/: 0.91 at 10% with plain ef).
			ef = int(float64(ef) * math.Sqrt(twoHopSelectivity/sel))
		}
	} else if live <= int64(ef) {
		return x.exactLocked(s, qq, k, nil), nil
	}
	x.searchModeLocked(s, qq, ef, opts.Allow, twoHop)
	return toResults(s.res.drainSorted(s.w[:0]), k), nil
}

// Filtered search plan, by selectivity (allowed ids / live vectors),
// measured at 100,000 x 384 with ef 100 (TestCompareDump, bench/): below
// exactSelectivity (or at most exactMinCard allowed ids) an exact scan of the allowed ids is exact and about as
// cheap (the two-hop walk loses recall there: 0.93 at 3%, 0.83 at 2% on
// clustered data, 0.91 at 10% on bench's hard data); up to
// twoHopSelectivity the two-hop walk evaluates only allowed nodes (5-7x
// fewer distances than the plain walk at 5-10%); above it the plain walk,
// which evaluates disallowed neighbours too, is cheaper.
const (
	exactSelectivity  = 0.12
	exactMinCard      = 4096
	twoHopSelectivity = 0.3
)

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
func (x *Index) searchLocked(s *scratch, q []float32, ef int, allow Allow) {
	x.searchModeLocked(s, q, ef, allow, allow != nil)
}

// searchModeLocked is searchLocked choosing the filtered walk: two-hop
// (ACORN-1) or plain (expanding disallowed nodes as candidates).
// REQUIRES: x.mu held shared.
func (x *Index) searchModeLocked(s *scratch, q []float32, ef int, allow Allow, twoHop bool) {
	s.res = s.res[:0]
	ep, top, ok := x.entryPoint()
	if !ok {
		return
	}
	d := x.dist(q, x.vecLocked(ep))
	for l := top; l > 0; l-- {
		ep, d = x.greedyLocked(q, ep, d, l)
	}
	s.seeds = append(s.seeds[:0], cand{d, ep})
	if twoHop {
		x.searchFilteredLocked(s, q, s.seeds, ef, allow)
		return
	}
	x.searchLayerLocked(s, q, s.seeds, ef, 0, allow, false)
}

// searchFilteredLocked is Algorithm 2 at layer 0 restricted to allowed
// nodes, ACORN-1 style: only allowed nodes get a distance and enter the
// candidate queue; a disallowed neighbour is not evaluated but its own
// neighbours are (two hops), so the walk crosses regions the filter
// excludes without paying for their vectors.
// REQUIRES: x.mu held.
func (x *Index) searchFilteredLocked(s *scratch, q []float32, seeds []cand, ef int, allow Allow) {
	gen := s.nextGen()
	marks := s.marks
	states := x.mu.state
	vecs := x.mu.vecs[:len(states)*x.dim]
	dim := x.dim
	s.cands = s.cands[:0]
	s.res = s.res[:0]
	for _, c := range seeds {
		if marks[c.id] == gen {
			continue
		}
		marks[c.id] = gen
		s.cands.push(c)
		if x.accept(states, c.id, allow) {
			s.res.push(c)
		}
	}
	for len(s.res) > ef {
		s.res.pop()
	}
	s.ensure(x.m0 * 2)
	batch := x.kern.dotBatch
	if x.isL2 {
		batch = x.kern.l2Batch
	}
	for len(s.cands) > 0 {
		c := s.cands.pop()
		if len(s.res) >= ef && c.d > s.res[0].d {
			break
		}
		if len(s.cands) > 0 {
			prefetch(&x.listLocked(s.cands[0].id, 0)[0])
		}
		// First hop: allowed neighbours are evaluated; disallowed ones
		// are set aside (their lists prefetched) for the second hop.
		blk := x.listLocked(c.id, 0)
		n := min(int(atomic.LoadUint32(&blk[0])), len(blk)-1)
		ids := s.ids[:0]
		hop := s.hop[:0]
		for i := 1; i <= n; i++ {
			nb := atomic.LoadUint32(&blk[i])
			if marks[nb] == gen {
				continue
			}
			marks[nb] = gen
			if allow.Contains(nb) {
				ids = append(ids, nb)
			} else {
				hop = append(hop, nb)
				prefetch(&x.listLocked(nb, 0)[0])
			}
		}
		// Second hop, until the expansion holds 2*M nodes (ACORN-1's
		// truncation, which keeps the work per step like an unfiltered
		// search's).
		for hi, nb := range hop {
			if len(ids) >= x.m0 {
				// Not expanded: let a later step reach it again.
				for _, u := range hop[hi:] {
					marks[u] = 0
				}
				break
			}
			b2 := x.listLocked(nb, 0)
			n2 := min(int(atomic.LoadUint32(&b2[0])), len(b2)-1)
			for j := 1; j <= n2 && len(ids) < x.m0; j++ {
				nb2 := atomic.LoadUint32(&b2[j])
				if marks[nb2] != gen && allow.Contains(nb2) {
					marks[nb2] = gen
					ids = append(ids, nb2)
				}
			}
		}
		s.hop = hop
		if len(ids) == 0 {
			continue
		}
		s.ndist += len(ids)
		dists := s.dists[:len(ids)]
		batch(q, vecs, dim, ids, dists)
		for i, nb := range ids {
			d := dists[i]
			if !x.isL2 {
				d = 1 - d
			}
			if len(s.res) < ef || d < s.res[0].d {
				s.cands.push(cand{d, nb})
				if atomic.LoadUint32(&states[nb]) == stateLive {
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

// greedyLocked descends layer from ep to a local minimum (ef = 1).
// REQUIRES: x.mu held.
func (x *Index) greedyLocked(q []float32, ep uint32, d float32, layer int) (uint32, float32) {
	for changed := true; changed; {
		changed = false
		blk := x.listLocked(ep, layer)
		n := min(int(atomic.LoadUint32(&blk[0])), len(blk)-1)
		for i := 1; i <= n; i++ {
			nb := atomic.LoadUint32(&blk[i])
			if dn := x.dist(q, x.vecLocked(nb)); dn < d {
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
func (x *Index) searchLayerLocked(s *scratch, q []float32, seeds []cand, ef, layer int, allow Allow, construct bool) {
	gen := s.nextGen()
	marks := s.marks
	states := x.mu.state
	vecs := x.mu.vecs[:len(states)*x.dim]
	dim := x.dim
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
	batch := x.kern.dotBatch
	if x.isL2 {
		batch = x.kern.l2Batch
	}
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
		batch(q, vecs, dim, ids, dists)
		for i, nb := range ids {
			d := dists[i]
			if !x.isL2 {
				d = 1 - d
			}
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
	qq, err := x.prepareQuery(s, q)
	if err != nil {
		return nil, err
	}
	return x.exactLocked(s, qq, k, allow), nil
}

// REQUIRES: x.mu held shared.
func (x *Index) exactLocked(s *scratch, q []float32, k int, allow Allow) []Result {
	states := x.mu.state
	vecs := x.mu.vecs[:len(states)*x.dim]
	batch := x.kern.dotBatch
	if x.isL2 {
		batch = x.kern.l2Batch
	}
	const chunk = 64
	s.ensure(chunk)
	h := s.res[:0]
	ids := s.ids[:0]
	flush := func() {
		dists := s.dists[:len(ids)]
		batch(q, vecs, x.dim, ids, dists)
		for i, id := range ids {
			d := dists[i]
			if !x.isL2 {
				d = 1 - d
			}
			if c := (cand{d, id}); len(h) < k {
				h.push(c)
			} else if c.less(h[0]) {
				h.replaceTop(c)
			}
		}
		ids = ids[:0]
	}
	consider := func(id uint32) {
		if atomic.LoadUint32(&states[id]) != stateLive {
			return
		}
		ids = append(ids, id)
		if len(ids) == chunk {
			flush()
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
	flush()
	s.res = h
	return toResults(s.res.drainSorted(s.w[:0]), k)
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
