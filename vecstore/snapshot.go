package vecstore

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	bolt "go.etcd.io/bbolt"
)

// Checkpoint writes a graph snapshot for collection collID now (normally
// snapshots are written automatically as the change log grows, and on Close).
func (s *Store) Checkpoint(ctx context.Context, collID string) error {
	cid, err := chroma.ParseCollectionID(collID)
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
// reflects, without its vectors: they are in the vec bucket) and the
// record id of each dense id, stores both uncompressed (so that a reader
// can search them where they lie in the mapped file, see inplace.go), then
// trims the change log up to that sequence. If another process wrote to the
// collection in between, the snapshot is skipped (a later write retries). A
// snapshot of the same state in an older form (compressed, or vectors
// included) is replaced.
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
	var side snapSide
	if err == nil {
		side, err = mc.snapSide(applied, mc.info)
	}
	s.mu.RUnlock()
	if err != nil {
		return fmt.Errorf("vecstore: marshal graph: %w", err)
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
		if ci.LastSeq != applied || (ci.SnapSeq == applied && ci.SnapRaw) {
			return nil // someone wrote since, or another process already snapshotted this state
		}
		if err := upgradeFormat(tx); err != nil {
			return err
		}
		if err := putRawSnapshot(tx, ci, raw, side, applied, next); err != nil {
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

// snapSide is what a raw snapshot stores beside its graph for reads in
// place: the record id of each dense id (encodeSnapIDs), the metadata
// postings (encodePostings) and, for sq8r, the row scales
// (encodeRowScales).
type snapSide struct {
	ids, meta, scales []byte
}

// snapSide encodes mc's side data as of sequence seq, ci describing the
// collection as stored.
// REQUIRES: the collection's lock, held for reading.
func (mc *memColl) snapSide(seq uint64, ci *collInfo) (snapSide, error) {
	side := snapSide{ids: encodeSnapIDs(mc.byDense)}
	var err error
	if side.meta, err = encodePostings(mc.idx, seq); err != nil {
		return snapSide{}, err
	}
	if ci.Config.HNSW.VectorCode == chroma.CodeSQ8R && mc.graph != nil {
		if side.scales, err = encodeRowScales(mc.graph, ci, mc.cent, uint32(len(mc.byDense)), seq); err != nil {
			return snapSide{}, err
		}
	}
	return side, nil
}

// putRawSnapshot replaces collection ci's snapshot with raw (MarshalGraph
// of its graph as of sequence seq, next its dense-id bound), uncompressed
// in one value so that it lies contiguous in the mapped file, with side
// beside it; it trims the change log up to seq and sets ci's snapshot
// fields (the caller stores ci).
func putRawSnapshot(tx *bolt.Tx, ci *collInfo, raw []byte, side snapSide, seq uint64, next uint32) error {
	return replaceSnapshot(tx, ci, seq, next, func(sb *bolt.Bucket) error {
		if err := sb.Put(u32(0), raw); err != nil {
			return err
		}
		for _, kv := range []struct{ k, v []byte }{{keySnapIDs, side.ids}, {keySnapMeta, side.meta}, {keySnapRowScales, side.scales}} {
			if kv.v == nil {
				continue
			}
			if err := sb.Put(kv.k, kv.v); err != nil {
				return err
			}
		}
		ci.SnapChunks, ci.SnapLen, ci.SnapCRC, ci.SnapRaw = 1, int64(len(raw)), crc(raw), true
		return nil
	})
}

// replaceSnapshot empties collection ci's snap bucket, lets put fill it,
// trims the change log up to seq and sets ci's other snapshot fields.
func replaceSnapshot(tx *bolt.Tx, ci *collInfo, seq uint64, next uint32, put func(sb *bolt.Bucket) error) error {
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
	if err := put(sb); err != nil {
		return err
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
	ci.SnapGraph = true
	ci.OpsSinceSnap = 0
	return nil
}
