package vecstore

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Checkpoint writes a graph snapshot for collection collID now (normally
// snapshots are written automatically as the change log grows, and on Close).
func (s *Store) Checkpoint(ctx context.Context, collID string) error {
	cid, err := ParseCollectionID(collID)
	if err != nil {
		return err
	}
	if err := s.refresh(ctx, cid); err != nil {
		return err
	}
	err = s.snapshot(ctx, cid)
	if err == errNoSnapshotNeeded {
		return nil
	}
	return err
}

// snapshot serializes the collection's graph (as of the sequence memory
// reflects, without its vectors: they are in the vec bucket), compresses it
// with zstd and stores it in chunks, then trims the change log up to that
// sequence. If another process wrote to the collection in between, the
// snapshot is skipped (a later write retries). A snapshot of the same state
// in the older form, vectors included, is replaced.
func (s *Store) snapshot(ctx context.Context, cid string) error {
	s.ioMu.Lock()
	defer s.ioMu.Unlock()
	s.mu.RLock()
	mc := s.mu.colls[cid]
	if s.mu.closed || mc == nil || mc.graph == nil {
		s.mu.RUnlock()
		return errNoSnapshotNeeded
	}
	applied := mc.applied
	next := uint32(len(mc.byDense))
	raw, err := mc.graph.MarshalGraph()
	s.mu.RUnlock()
	if err != nil {
		return fmt.Errorf("vecstore: marshal graph: %w", err)
	}
	comp, err := compressSnapshot(raw)
	if err != nil {
		return err
	}
	var ni collInfo
	var newSeq uint64
	written := false
	err = s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bktColls).Get([]byte(cid))
		if b == nil {
			return nil
		}
		ci, err := decodeCollInfo(b)
		if err != nil {
			return err
		}
		if ci.LastSeq != applied || (ci.SnapSeq == applied && ci.SnapGraph) {
			return nil // someone wrote since, or another process already snapshotted this state
		}
		if err := upgradeFormat(tx); err != nil {
			return err
		}
		if err := putSnapshot(tx, ci, comp, applied, next); err != nil {
			return err
		}
		ni = *ci
		written = true
		// Bump the global sequence so that every process re-reads the
		// collection table (the snapshot fields changed).
		if newSeq, err = nextSeq(tx); err != nil {
			return err
		}
		return putCollInfo(tx, ci)
	}, func() {
		if newSeq != 0 {
			s.writeSeqFile(newSeq)
		}
	}, false)
	if err != nil {
		return err
	}
	if written {
		s.stats.snapshots.Add(1)
		s.mu.Lock()
		if mc2 := s.mu.colls[cid]; mc2 == mc && mc.applied == applied {
			mc.info = &ni
		}
		if ci := s.mu.infos[cid]; ci != nil && ci.LastSeq == applied {
			s.mu.infos[cid] = &ni
		}
		s.mu.Unlock()
	}
	return nil
}

// putSnapshot replaces collection ci's snapshot with comp (a compressed
// MarshalGraph of its graph as of sequence seq, next its dense-id bound),
// trims the change log up to seq and sets ci's snapshot fields; the caller
// stores ci.
func putSnapshot(tx *bolt.Tx, ci *collInfo, comp []byte, seq uint64, next uint32) error {
	cb := tx.Bucket(collBucketName(ci.ID))
	if cb == nil {
		return corruptf(nil, "collection %s: missing data bucket", ci.ID)
	}
	if err := cb.DeleteBucket(subSnap); err != nil {
		return err
	}
	sb, err := cb.CreateBucket(subSnap)
	if err != nil {
		return err
	}
	chunks := 0
	for off := 0; off < len(comp); off += snapChunk {
		end := min(off+snapChunk, len(comp))
		if err := sb.Put(u32(uint32(chunks)), comp[off:end]); err != nil {
			return err
		}
		chunks++
	}
	lb := cb.Bucket(subLog)
	c := lb.Cursor()
	for k, _ := c.First(); k != nil && string(k) <= string(u64(seq)); k, _ = c.First() {
		if err := lb.Delete(k); err != nil {
			return err
		}
	}
	ci.SnapSeq = seq
	ci.SnapNext = next
	ci.SnapChunks = chunks
	ci.SnapLen = int64(len(comp))
	ci.SnapCRC = crc(comp)
	ci.SnapGraph = true
	ci.OpsSinceSnap = 0
	return nil
}
