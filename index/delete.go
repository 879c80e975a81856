package index

import (
	"sync"
	"sync/atomic"
)

// Delete removes the vector at id. The node becomes a tombstone: searches
// still walk through it but never return it. Tombstones are unlinked (their
// neighbours repaired) and their slots freed when an insert reuses one of
// them, or automatically once they reach a quarter of the live vectors.
func (x *Index) Delete(id uint32) error {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mu.RLock()
	ok := int(id) < len(x.mu.state) && atomic.CompareAndSwapUint32(&x.mu.state[id], stateLive, stateDeleted)
	x.mu.RUnlock()
	if !ok {
		return ErrNotFound
	}
	x.live.Add(-1)
	x.tombstones++
	if x.tombstones >= autoRepairMin && x.tombstones*4 >= int(x.live.Load()) {
		x.repairWriteLocked()
	}
	return nil
}

// autoRepairMin is the tombstone count below which Delete never repairs.
const autoRepairMin = 1024

// Repair unlinks every tombstone now, repairing the neighbour lists that
// pointed at them, and frees their slots.
func (x *Index) Repair() {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.repairWriteLocked()
}

// repairWriteLocked removes every tombstone from the graph. Each live node
// that links to a tombstone gets a new list chosen by the heuristic from
// its surviving neighbours and the neighbours reached through its deleted
// ones. Searches run concurrently until the final exclusive step that
// frees the slots.
// REQUIRES: x.writeMu held.
func (x *Index) repairWriteLocked() {
	x.mu.RLock()
	n := len(x.mu.state)
	dead := make([]bool, n)
	var targets []uint32
	for id := range n {
		if atomic.LoadUint32(&x.mu.state[id]) == stateDeleted {
			dead[id] = true
			targets = append(targets, uint32(id))
		}
	}
	if len(targets) == 0 {
		x.mu.RUnlock()
		return
	}
	const chunk = 1024
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < x.opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := x.getScratch(n)
			defer x.putScratch(s)
			for {
				lo := int(next.Add(chunk)) - chunk
				if lo >= n {
					return
				}
				for id := lo; id < min(lo+chunk, n); id++ {
					if atomic.LoadUint32(&x.mu.state[id]) != stateLive {
						continue
					}
					for l := 0; l <= int(x.mu.levels[id]); l++ {
						x.repairListLocked(s, uint32(id), l, dead)
					}
				}
			}
		}()
	}
	wg.Wait()

	// A new entry point if the old one goes: the highest live node.
	if ep, _, ok := x.entryPoint(); ok && dead[ep] {
		var e uint64
		best := -1
		for id := range n {
			if atomic.LoadUint32(&x.mu.state[id]) == stateLive && int(x.mu.levels[id]) > best {
				best = int(x.mu.levels[id])
				e = packEntry(uint32(id), best)
			}
		}
		x.entry.Store(e)
	}
	x.mu.RUnlock()

	// No search can still hold a path to a target once it has ended.
	x.mu.Lock()
	for _, id := range targets {
		for l := 0; l <= int(x.mu.levels[id]); l++ {
			atomic.StoreUint32(&x.listLocked(id, l)[0], 0)
		}
		x.mu.levels[id] = 0
		atomic.StoreUint32(&x.mu.state[id], stateEmpty)
	}
	x.tombstones = 0
	x.mu.Unlock()
}

// repairListLocked rebuilds id's list at layer if it names a dead node.
// REQUIRES: x.writeMu held, x.mu held shared; only this goroutine writes
// id's lists.
func (x *Index) repairListLocked(s *scratch, id uint32, layer int, dead []bool) {
	blk := x.listLocked(id, layer)
	cnt := int(atomic.LoadUint32(&blk[0]))
	hit := false
	for i := 1; i <= cnt; i++ {
		if dead[atomic.LoadUint32(&blk[i])] {
			hit = true
			break
		}
	}
	if !hit {
		return
	}
	gen := s.nextGen()
	s.marks[id] = gen
	vid := x.storedQueryLocked(vec(&s.vBase, x.dim), &s.qcBase, id)
	s.buf = s.buf[:0]
	s.hop = s.hop[:0]
	add := func(c uint32) {
		if s.marks[c] == gen {
			return
		}
		s.marks[c] = gen
		if dead[c] {
			s.hop = append(s.hop, c)
			return
		}
		s.buf = append(s.buf, cand{x.distLocked(vid, c), c})
	}
	for i := 1; i <= cnt; i++ {
		add(atomic.LoadUint32(&blk[i]))
	}
	// One hop through the dead neighbours to their neighbours (a dead
	// node met there is not crossed again).
	maxN := x.maxNeighbours(layer)
	for _, dn := range s.hop[:len(s.hop):len(s.hop)] {
		db := x.listLocked(dn, layer)
		dc := int(atomic.LoadUint32(&db[0]))
		for i := 1; i <= dc; i++ {
			add(atomic.LoadUint32(&db[i]))
		}
	}
	sortCands(s.buf)
	// The heuristic costs up to maxN distances per candidate; the nearest
	// 3*maxN are plenty to choose maxN from.
	s.buf = s.buf[:min(len(s.buf), 3*maxN)]
	s.sel = x.selectLocked(s, s.sel[:0], s.buf, maxN)
	x.setListLocked(id, layer, s.sel)
}
