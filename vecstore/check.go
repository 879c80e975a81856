package vecstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	bolt "go.etcd.io/bbolt"
)

// Check verifies, for every collection, that the records on disk, the
// in-memory records, the metadata index and the graph agree (every record
// has its vector in the graph, nothing else is in it), that the graph's own
// invariants hold, and that bbolt's pages are consistent. It loads every
// collection. A damaged file gives ErrCorrupt (Repair salvages it).
func (s *Store) Check(ctx context.Context) error {
	s.ioMu.Lock()
	defer s.ioMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return chroma.ErrClosed
	}
	return s.view(ctx, func(tx *bolt.Tx) error {
		if err := s.syncLocked(tx, false); err != nil {
			return err
		}
		// bbolt's checker walks the pages on its own goroutine, where a
		// wild page id in a damaged file faults and kills the process (no
		// recover reaches it). Walk every page here first, where view turns
		// faults into ErrCorrupt; only a file whose pages all read cleanly
		// goes on to bbolt's page accounting.
		if err := readEveryPage(tx); err != nil {
			return corruptf(err, "bbolt page walk")
		}
		// Drain every error: the checker must be done before this
		// transaction ends.
		var first error
		for err := range tx.Check() {
			if first == nil {
				first = err
			}
		}
		if first != nil {
			return corruptf(first, "bbolt consistency check")
		}
		var errs []error
		for id := range s.mu.infos {
			mc, err := s.loadedLocked(tx, id)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if err := checkColl(tx, mc); err != nil {
				errs = append(errs, fmt.Errorf("collection %s: %w", mc.info.describe(), err))
			}
		}
		return errors.Join(errs...)
	})
}

// readEveryPage reads every key and value of every bucket, nested ones
// included, touching each value page by page (a value may span overflow
// pages whose count a damaged header could inflate).
func readEveryPage(tx *bolt.Tx) error {
	var sink byte
	var walk func(b *bolt.Bucket) error
	walk = func(b *bolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				if sub := b.Bucket(k); sub != nil {
					return walk(sub)
				}
				return nil
			}
			for i := 0; i < len(v); i += 4096 {
				sink ^= v[i]
			}
			if len(v) > 0 {
				sink ^= v[len(v)-1]
			}
			return nil
		})
	}
	err := tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return walk(b) })
	_ = sink
	return err
}

func checkColl(tx *bolt.Tx, mc *memColl) error {
	cb := tx.Bucket(collBucketName(mc.info.ID))
	if cb == nil {
		return fmt.Errorf("missing data bucket")
	}
	n := 0
	err := cb.Bucket(subRec).ForEach(func(k, v []byte) error {
		n++
		r, err := decodeRecord(string(k), v)
		if err != nil {
			return err
		}
		m := mc.byID[r.id]
		if m == nil {
			return fmt.Errorf("record %q on disk, not in memory", r.id)
		}
		if m.dense != r.dense || m.order != r.order || m.vseq != r.vseq {
			return fmt.Errorf("record %q differs between disk and memory", r.id)
		}
		if cb.Bucket(subVec).Get(u32(r.dense)) == nil {
			return fmt.Errorf("record %q has no vector", r.id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n != len(mc.byID) {
		return fmt.Errorf("%d records on disk, %d in memory", n, len(mc.byID))
	}
	if nv := cb.Bucket(subVec).Stats().KeyN; nv != n {
		return fmt.Errorf("%d vectors on disk for %d records", nv, n)
	}
	if int(mc.live.GetCardinality()) != n {
		return fmt.Errorf("live set has %d ids for %d records", mc.live.GetCardinality(), n)
	}
	if mc.graph == nil {
		if n != 0 {
			return fmt.Errorf("%d records but no graph", n)
		}
		return nil
	}
	if err := mc.graph.Check(); err != nil {
		return err
	}
	if mc.graph.Len() != n {
		return fmt.Errorf("graph holds %d vectors for %d records", mc.graph.Len(), n)
	}
	mc.prepareReads()
	for _, r := range mc.byID {
		if mc.byDense[r.dense] != r {
			return fmt.Errorf("record %q: dense slot %d mismatch", r.id, r.dense)
		}
		if !mc.graph.Contains(r.dense) {
			return fmt.Errorf("record %q: dense id %d not in graph", r.id, r.dense)
		}
		for k, v := range r.meta {
			b := roaring.New()
			mc.idx.eq(k, v, b)
			if !b.Contains(r.dense) {
				return fmt.Errorf("record %q: metadata %s=%v not indexed", r.id, k, v)
			}
		}
	}
	return nil
}
