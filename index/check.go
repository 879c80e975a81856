package index

import (
	"fmt"
	"sync/atomic"
)

// Check verifies the graph's invariants: the entry point exists and sits on
// the top layer, levels are consistent, every neighbour list is within its
// bound, free of duplicates and self-links, and names only occupied slots
// that reach its layer; counters match the slot states. It returns an
// error wrapping ErrInvariant describing the first violation.
func (x *Index) Check() error {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.checkLocked()
}

// REQUIRES: x.writeMu held, x.mu held; no linking in progress.
func (x *Index) checkLocked() error {
	n := len(x.mu.state)
	vecsOK := len(x.mu.vecs) == n*x.dim && len(x.mu.codes) == 0
	if x.code != Float32 {
		vecsOK = len(x.mu.codes) == n*x.rowLen && len(x.mu.vecs) == 0
	}
	if !vecsOK || len(x.mu.links0) != n*x.stride || len(x.mu.levels) != n ||
		len(x.mu.upperOff) != n || len(x.mu.upperCap) != n {
		return fmt.Errorf("%w: slot arrays disagree on length %d", ErrInvariant, n)
	}
	live, dead, top := 0, 0, -1
	for id := range n {
		st := atomic.LoadUint32(&x.mu.state[id])
		lvl := int(x.mu.levels[id])
		switch st {
		case stateEmpty:
			if lvl != 0 || x.mu.links0[id*x.stride] != 0 {
				return fmt.Errorf("%w: empty slot %d has level %d or links", ErrInvariant, id, lvl)
			}
			continue
		case stateLive:
			live++
		case stateDeleted:
			dead++
		default:
			return fmt.Errorf("%w: slot %d in state %d", ErrInvariant, id, st)
		}
		if lvl > maxLevel {
			return fmt.Errorf("%w: slot %d level %d above %d", ErrInvariant, id, lvl, maxLevel)
		}
		if lvl > 0 && (lvl > int(x.mu.upperCap[id]) || int(x.mu.upperOff[id])+lvl*x.ustr > len(x.mu.upper)) {
			return fmt.Errorf("%w: slot %d upper lists out of bounds", ErrInvariant, id)
		}
		top = max(top, lvl)
	}
	if int64(live) != x.live.Load() || dead != x.tombstones {
		return fmt.Errorf("%w: %d live and %d deleted slots, counters say %d and %d",
			ErrInvariant, live, dead, x.live.Load(), x.tombstones)
	}
	ep, epLevel, ok := x.entryPoint()
	switch {
	case top < 0 && ok:
		return fmt.Errorf("%w: entry point %d in an empty graph", ErrInvariant, ep)
	case top >= 0 && !ok:
		return fmt.Errorf("%w: no entry point", ErrInvariant)
	case ok && (int(ep) >= n || atomic.LoadUint32(&x.mu.state[ep]) == stateEmpty):
		return fmt.Errorf("%w: entry point %d is not an occupied slot", ErrInvariant, ep)
	case ok && (epLevel != top || int(x.mu.levels[ep]) != top):
		return fmt.Errorf("%w: entry point %d at level %d, top level is %d", ErrInvariant, ep, epLevel, top)
	}
	seen := make(map[uint32]struct{}, x.m0)
	for id := range n {
		if atomic.LoadUint32(&x.mu.state[id]) == stateEmpty {
			continue
		}
		for l := 0; l <= int(x.mu.levels[id]); l++ {
			blk := x.listLocked(uint32(id), l)
			cnt := int(atomic.LoadUint32(&blk[0]))
			if cnt > x.maxNeighbours(l) {
				return fmt.Errorf("%w: slot %d layer %d has %d neighbours, max %d", ErrInvariant, id, l, cnt, x.maxNeighbours(l))
			}
			clear(seen)
			for _, nb := range blk[1 : 1+cnt] {
				switch {
				case int(nb) >= n:
					return fmt.Errorf("%w: slot %d layer %d links to %d, out of range", ErrInvariant, id, l, nb)
				case nb == uint32(id):
					return fmt.Errorf("%w: slot %d links to itself at layer %d", ErrInvariant, id, l)
				case atomic.LoadUint32(&x.mu.state[nb]) == stateEmpty:
					return fmt.Errorf("%w: slot %d layer %d links to empty slot %d", ErrInvariant, id, l, nb)
				case int(x.mu.levels[nb]) < l:
					return fmt.Errorf("%w: slot %d layer %d links to %d of level %d", ErrInvariant, id, l, nb, x.mu.levels[nb])
				}
				if _, dup := seen[nb]; dup {
					return fmt.Errorf("%w: slot %d layer %d links twice to %d", ErrInvariant, id, l, nb)
				}
				seen[nb] = struct{}{}
			}
		}
	}
	return nil
}
