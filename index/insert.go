package index

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
)

// ErrBatchMismatch reports an InsertBatch whose ids and vectors differ in
// length.
var ErrBatchMismatch = errors.New("index: ids and vectors differ in length")

// Insert stores vec at id and links it into the graph. Inserting at a live
// id replaces its vector; inserting at a deleted id reuses the slot.
func (x *Index) Insert(id uint32, vec []float32) error {
	return x.InsertBatch(context.Background(), []uint32{id}, [][]float32{vec})
}

// InsertBatch inserts vecs[i] at ids[i], linking them on Options.Workers
// goroutines. When an id repeats, the last vector wins. Every vector is
// validated before anything changes; if ctx is cancelled while linking, the
// batch's ids that were not yet linked are left absent and ctx.Err() is
// returned.
func (x *Index) InsertBatch(ctx context.Context, ids []uint32, vecs [][]float32) error {
	if len(ids) != len(vecs) {
		return fmt.Errorf("%w: %d ids, %d vectors", ErrBatchMismatch, len(ids), len(vecs))
	}
	if len(ids) == 0 {
		return ctx.Err()
	}
	prepared := make([][]float32, len(ids))
	for i, id := range ids {
		v, err := x.prepare(vecs[i], false)
		if err != nil {
			return fmt.Errorf("id %d: %w", id, err)
		}
		prepared[i] = v
	}
	return x.insertBatch(ctx, ids, prepared, nil)
}

// insertBatch is InsertBatch of prepared vectors; with rows (InsertRows),
// slot ids[i] gets rows[i] as stored, and the index does not train.
func (x *Index) insertBatch(ctx context.Context, ids []uint32, prepared [][]float32, rows [][]byte) error {
	if len(ids) == 0 {
		return ctx.Err()
	}
	maxID := uint32(0)
	for _, id := range ids {
		if id > MaxID {
			return fmt.Errorf("%w: %d above %d", ErrInvalidID, id, MaxID)
		}
		maxID = max(maxID, id)
	}
	order := dedupeLast(ids)
	if err := ctx.Err(); err != nil {
		return err
	}

	x.writeMu.Lock()
	defer x.writeMu.Unlock()

	// Replacing a live id deletes it first; reused slots must be unlinked
	// from the graph before their vectors change.
	needRepair := false
	x.mu.RLock()
	for _, i := range order {
		id := ids[i]
		if int(id) >= len(x.mu.state) {
			continue
		}
		switch atomic.LoadUint32(&x.mu.state[id]) {
		case stateLive:
			atomic.StoreUint32(&x.mu.state[id], stateDeleted)
			x.live.Add(-1)
			x.tombstones++
			needRepair = true
		case stateDeleted:
			needRepair = true
		}
	}
	x.mu.RUnlock()
	if needRepair {
		x.repairWriteLocked()
	}

	if x.code == SQ8Residual && rows == nil {
		x.mu.Lock()
		x.trainOnInsertLocked(ids, order, prepared)
		x.mu.Unlock()
	}
	x.mu.Lock()
	x.growLocked(int(maxID) + 1)
	for _, i := range order {
		if x.code != SQ8Residual { // linkLocked codes an sq8r row
			x.storeLocked(ids[i], prepared[i])
		}
		x.placeLocked(ids[i])
	}
	x.mu.Unlock()

	x.mu.RLock()
	defer x.mu.RUnlock()
	workers := min(x.opts.Workers, len(order))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := x.getScratch(len(x.mu.state))
			defer x.putScratch(s)
			for {
				j := int(next.Add(1)) - 1
				if j >= len(order) {
					return
				}
				id := ids[order[j]]
				if ctx.Err() != nil {
					// Never linked, so nothing points at it.
					atomic.StoreUint32(&x.mu.state[id], stateEmpty)
					continue
				}
				var row []byte
				if rows != nil {
					row = rows[order[j]]
				}
				x.linkLocked(s, id, prepared[order[j]], row)
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		// Slots left unlinked are empty again; empty slots have level 0
		// (searches never read levels, so this needs no exclusive lock).
		for _, i := range order {
			if id := ids[i]; atomic.LoadUint32(&x.mu.state[id]) == stateEmpty {
				x.mu.levels[id] = 0
			}
		}
	}
	return ctx.Err()
}

// dedupeLast returns the indexes of ids to insert, keeping the last
// occurrence of each id.
func dedupeLast(ids []uint32) []int {
	order := make([]int, 0, len(ids))
	if len(ids) == 1 {
		return append(order, 0)
	}
	last := make(map[uint32]int, len(ids))
	for i, id := range ids {
		last[id] = i
	}
	for i, id := range ids {
		if last[id] == i {
			order = append(order, i)
		}
	}
	return order
}

// growLocked makes slots [0, n) addressable.
// REQUIRES: x.writeMu held, x.mu held exclusively.
func (x *Index) growLocked(n int) {
	old := len(x.mu.state)
	if n <= old {
		return
	}
	if n < old+old/4 {
		n = old + old/4
	}
	if x.code != Float32 {
		x.mu.codes = grow(x.mu.codes, n*x.rowLen)
	} else {
		x.mu.vecs = grow(x.mu.vecs, n*x.dim)
	}
	x.mu.links0 = grow(x.mu.links0, n*x.stride)
	x.mu.upperOff = grow(x.mu.upperOff, n)
	x.mu.upperCap = grow(x.mu.upperCap, n)
	x.mu.levels = grow(x.mu.levels, n)
	x.mu.state = grow(x.mu.state, n)
}

func grow[T any](s []T, n int) []T {
	out := make([]T, n)
	copy(out, s)
	return out
}

// placeLocked writes v into the empty slot id, draws its level and clears
// its neighbour lists; the slot becomes pending until linked.
// REQUIRES: x.writeMu held, x.mu held exclusively, slot id empty.
func (x *Index) placeLocked(id uint32) {
	level := int(-math.Log(1-x.rng.Float64()) * x.mult)
	level = min(level, maxLevel)
	x.draws++
	x.allocLevelsLocked(id, level)
	x.mu.state[id] = statePending
}

// allocLevelsLocked sets id's level and gives it empty neighbour lists.
// REQUIRES: x.mu held exclusively.
func (x *Index) allocLevelsLocked(id uint32, level int) {
	x.mu.levels[id] = uint8(level)
	if level > int(x.mu.upperCap[id]) {
		x.mu.upperOff[id] = uint32(len(x.mu.upper))
		x.mu.upperCap[id] = uint8(level)
		x.mu.upper = append(x.mu.upper, make([]uint32, level*x.ustr)...)
	}
	for l := 0; l <= level; l++ {
		x.listLocked(id, l)[0] = 0
	}
}

// linkLocked is the paper's Algorithm 1 for the pending node id, whose
// prepared vector is v: the exact vector is the query also when the index
// keeps only a code of it. row, when not nil, is id's SQ8Residual row as
// stored (v its decoding).
// REQUIRES: x.writeMu held (by the batch), x.mu held shared.
func (x *Index) linkLocked(s *scratch, id uint32, v []float32, row []byte) {
	q := x.newQueryBuf(v, &s.qcQuery)
	if x.code == SQ8Residual {
		// The row is written here, before id is reachable (linked from a
		// neighbour or made the entry point, both atomic stores that
		// publish it), from the dots with every centroid that the
		// searches below then use; a row given as stored (InsertRows)
		// is taken as it is.
		k := x.fillCentroidDots(q)
		if row != nil {
			x.setStoredRowLocked(id, row)
		} else {
			x.encodeResidual(x.rowLocked(id), v, k, vec(&s.vEnc, x.dim))
		}
	}
	level := int(x.mu.levels[id])
	for {
		if x.entry.Load() != 0 || x.entry.CompareAndSwap(0, packEntry(id, level)) {
			break
		}
	}
	ep, top, _ := x.entryPoint()
	if ep != id {
		d := x.distLocked(q, ep)
		for l := top; l > level; l-- {
			ep, d = x.greedyLocked(q, ep, d, l)
		}
		s.seeds = append(s.seeds[:0], cand{d, ep})
		for l := min(level, top); l >= 0; l-- {
			x.searchLayerLocked(s, q, s.seeds, x.opts.EfConstruction, l, nil, true)
			s.w = s.res.drainSorted(s.w[:0])
			w := s.w[:0]
			for _, c := range s.w {
				if c.id != id {
					w = append(w, c)
				}
			}
			s.sel = x.selectLocked(s, s.sel[:0], w, x.m)
			x.setListLocked(id, l, s.sel)
			for _, c := range s.sel {
				x.addLinkLocked(s, c.id, id, c.d, l)
			}
			s.seeds = append(s.seeds[:0], w...)
		}
		for {
			e := x.entry.Load()
			if int(e>>32)&0xff >= level || x.entry.CompareAndSwap(e, packEntry(id, level)) {
				break
			}
		}
	}
	atomic.StoreUint32(&x.mu.state[id], stateLive)
	x.live.Add(1)
}

// selectLocked is the paper's Algorithm 4 (simple heuristic, no extension,
// pruned connections discarded): from cands, sorted by distance to the
// base node, keep a candidate only if it is closer to the base than to
// every candidate already kept. Fewer than m candidates are all kept. Each
// kept candidate becomes a query (decoded once, for a code) and a tested
// candidate is compared with it in its stored form, so that the many
// candidates rejected are never decoded.
// REQUIRES: x.mu held; dst empty.
func (x *Index) selectLocked(s *scratch, dst, cands []cand, m int) []cand {
	if len(cands) <= m {
		return append(dst, cands...)
	}
	kept := vec(&s.kept, m*x.dim)
	if len(s.keptQ) < m {
		s.keptQ = make([]query, m)
		s.keptQC = make([]centroidDots, m)
	}
	for _, c := range cands {
		n := len(dst)
		if n >= m {
			break
		}
		good := true
		for j := range n {
			if x.distLocked(s.keptQ[j], c.id) < c.d {
				good = false
				break
			}
		}
		if good {
			s.keptQ[n] = x.storedQueryLocked(kept[n*x.dim:(n+1)*x.dim], &s.keptQC[n], c.id)
			dst = append(dst, c)
		}
	}
	return dst
}

func (x *Index) lockNode(id uint32) *sync.Mutex { return &x.locks[id%nLocks] }

// setListLocked replaces id's neighbours at layer.
// REQUIRES: x.mu held; no other goroutine writes id's list without its lock.
func (x *Index) setListLocked(id uint32, layer int, nbrs []cand) {
	mu := x.lockNode(id)
	mu.Lock()
	blk := x.listLocked(id, layer)
	for i, c := range nbrs {
		atomic.StoreUint32(&blk[1+i], c.id)
	}
	atomic.StoreUint32(&blk[0], uint32(len(nbrs)))
	mu.Unlock()
}

// addLinkLocked adds the edge n -> id at layer (d is their distance),
// shrinking n's list with the heuristic when it is full.
// REQUIRES: x.mu held.
func (x *Index) addLinkLocked(s *scratch, n, id uint32, d float32, layer int) {
	mu := x.lockNode(n)
	mu.Lock()
	defer mu.Unlock()
	blk := x.listLocked(n, layer)
	cnt := int(atomic.LoadUint32(&blk[0]))
	for i := 1; i <= cnt; i++ {
		if atomic.LoadUint32(&blk[i]) == id {
			return
		}
	}
	maxN := x.maxNeighbours(layer)
	if cnt < maxN {
		atomic.StoreUint32(&blk[1+cnt], id)
		atomic.StoreUint32(&blk[0], uint32(cnt+1))
		return
	}
	vn := x.storedQueryLocked(vec(&s.vBase, x.dim), &s.qcBase, n)
	s.buf = s.buf[:0]
	for i := 1; i <= cnt; i++ {
		e := atomic.LoadUint32(&blk[i])
		s.buf = append(s.buf, cand{x.distLocked(vn, e), e})
	}
	s.buf = append(s.buf, cand{d, id})
	sortCands(s.buf)
	s.tmp = x.selectLocked(s, s.tmp[:0], s.buf, maxN)
	sel := s.tmp
	for i, c := range sel {
		atomic.StoreUint32(&blk[1+i], c.id)
	}
	atomic.StoreUint32(&blk[0], uint32(len(sel)))
}
