package vecstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cairn-dev/cairn/index"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"
)

// memColl is one collection loaded in memory: its records, metadata index and
// HNSW graph. Mutations happen under Store.mu held exclusively; reads under
// Store.mu held shared (plus lazyMu for the lazily built caches).
type memColl struct {
	info    *collInfo
	applied uint64 // info.LastSeq reflected in memory

	byID    map[string]*record
	byDense []*record
	live    *roaring.Bitmap
	free    *roaring.Bitmap // dense ids below len(byDense) that are unused
	idx     *metaIndex
	graph   *index.Index // nil until the first vector

	// An sq8r collection's centroid table as stored (decoded; nil until
	// trained) and an empty index holding it that codes new rows
	// (rowCoderLocked; nil until needed).
	cent  []float32
	coder *index.Index

	lazyMu     sync.Mutex
	order      []uint32 // live dense ids by insertion order
	orderDirty bool
}

func newMemColl(ci *collInfo) *memColl {
	return &memColl{info: ci, byID: make(map[string]*record), live: roaring.New(), free: roaring.New(),
		idx: newMetaIndex(), orderDirty: true}
}

func indexSpace(s chroma.Space) index.Space {
	switch s {
	case chroma.SpaceCosine:
		return index.Cosine
	case chroma.SpaceIP:
		return index.IP
	}
	return index.L2
}

func (s *Store) newGraph(ci *collInfo) (*index.Index, error) {
	g, err := index.New(index.Options{Space: indexSpace(ci.Config.HNSW.Space), Dim: ci.Dimension,
		M: ci.Config.HNSW.MaxNeighbors, EfConstruction: ci.Config.HNSW.EfConstruction,
		EfSearch: ci.Config.HNSW.EfSearch, Seed: s.opts.Seed, Workers: s.opts.IndexWorkers,
		Code: indexCode(ci.Config.HNSW)})
	if err != nil {
		return nil, fmt.Errorf("vecstore: collection %s: %w", ci.ID, err)
	}
	return g, nil
}

// REQUIRES: caller holds Store.mu exclusively.
func (mc *memColl) removeRecordLocked(r *record) {
	mc.idx.remove(r.dense, r.meta)
	delete(mc.byID, r.id)
	if int(r.dense) < len(mc.byDense) && mc.byDense[r.dense] == r {
		mc.byDense[r.dense] = nil
	}
	mc.live.Remove(r.dense)
	mc.free.Add(r.dense)
	if mc.graph != nil && mc.graph.Contains(r.dense) {
		_ = mc.graph.Delete(r.dense)
	}
	mc.orderDirty = true
}

// setRecordLocked stores r (its dense slot must be free or already r.id's).
// REQUIRES: caller holds Store.mu exclusively.
func (mc *memColl) setRecordLocked(r *record) {
	if old := mc.byID[r.id]; old != nil {
		mc.idx.remove(old.dense, old.meta)
		if old.order != r.order {
			mc.orderDirty = true
		}
	} else {
		mc.orderDirty = true
	}
	for int(r.dense) >= len(mc.byDense) {
		mc.free.Add(uint32(len(mc.byDense)))
		mc.byDense = append(mc.byDense, nil)
	}
	mc.byID[r.id] = r
	mc.byDense[r.dense] = r
	mc.live.Add(r.dense)
	mc.free.Remove(r.dense)
	mc.idx.add(r.dense, r.meta)
}

// applyStatesLocked makes memory agree with the given disk states: states maps
// every touched id to its current record (nil when absent), vecs holds the
// vectors to (re)insert by dense id.
// REQUIRES: caller holds Store.mu exclusively.
func (s *Store) applyStatesLocked(mc *memColl, states map[string]*record, vecs map[uint32]graphVec) error {
	for id, r := range states {
		if old := mc.byID[id]; old != nil && (r == nil || r.dense != old.dense) {
			mc.removeRecordLocked(old)
		}
	}
	var ids []uint32
	var vs []graphVec
	for id, r := range states {
		if r == nil {
			continue
		}
		if int(r.dense) < len(mc.byDense) {
			if occ := mc.byDense[r.dense]; occ != nil && occ.id != id {
				mc.removeRecordLocked(occ)
			}
		}
		mc.setRecordLocked(r)
		if v, ok := vecs[r.dense]; ok {
			ids = append(ids, r.dense)
			vs = append(vs, v)
		}
	}
	return s.insertVectorsLocked(mc, ids, vs)
}

// REQUIRES: caller holds Store.mu exclusively.
func (s *Store) insertVectorsLocked(mc *memColl, ids []uint32, gvs []graphVec) error {
	if len(ids) == 0 {
		return nil
	}
	if mc.graph == nil {
		if mc.info.Dimension == 0 {
			mc.info.Dimension = len(gvs[0].v)
		}
		g, err := s.newGraph(mc.info)
		if err != nil {
			return err
		}
		if mc.cent != nil {
			if err := g.SetCentroids(mc.cent); err != nil {
				return fmt.Errorf("vecstore: collection %s: %w", mc.info.ID, err)
			}
		}
		mc.graph = g
	}
	if mc.info.Config.HNSW.VectorCode == chroma.CodeSQ8R {
		rows := make([][]byte, len(gvs))
		for i, gv := range gvs {
			rows[i] = gv.row
		}
		return mc.graph.InsertRows(context.Background(), ids, rows)
	}
	if len(ids) == 1 {
		return mc.graph.Insert(ids[0], gvs[0].v)
	}
	vs := make([][]float32, len(gvs))
	for i, gv := range gvs {
		vs[i] = gv.v
	}
	return mc.graph.InsertBatch(context.Background(), ids, vs)
}

// installCentroidsLocked makes table (the stored centroid table, decoded)
// mc's, and its graph's when the graph has none yet (rows coded before
// training have no centroid and stay valid).
// REQUIRES: caller holds Store.mu exclusively.
func (mc *memColl) installCentroidsLocked(table []float32) error {
	mc.cent, mc.coder = table, nil
	if mc.graph != nil && mc.graph.Centroids() == nil {
		if err := mc.graph.SetCentroids(table); err != nil {
			return fmt.Errorf("vecstore: collection %s: %w", mc.info.ID, err)
		}
	}
	return nil
}

// syncCentroidsLocked installs collection bucket cb's centroid table in mc
// when the file has one mc lacks (another process trained it).
// REQUIRES: caller holds Store.mu exclusively.
func (mc *memColl) syncCentroidsLocked(cb *bolt.Bucket, ci *collInfo) error {
	if mc.cent != nil || ci.Config.HNSW.VectorCode != chroma.CodeSQ8R {
		return nil
	}
	table, err := readCentroids(cb, ci)
	if err != nil || table == nil {
		return err
	}
	return mc.installCentroidsLocked(table)
}

// rowCoderLocked returns the empty index that codes collection ci's new
// rows against mc's centroid table.
// REQUIRES: caller holds Store.mu exclusively.
func (s *Store) rowCoderLocked(mc *memColl, ci *collInfo) (*index.Index, error) {
	if mc.coder != nil && mc.coder.Options().Dim == ci.Dimension {
		return mc.coder, nil
	}
	g, err := s.newGraph(ci)
	if err != nil {
		return nil, err
	}
	if mc.cent != nil {
		if err := g.SetCentroids(mc.cent); err != nil {
			return nil, fmt.Errorf("vecstore: collection %s: %w", ci.ID, err)
		}
	}
	mc.coder = g
	return g, nil
}

// prepareReads builds the lazily maintained caches (insertion order and the
// sorted numeric arrays of the metadata index). Safe under Store.mu shared.
func (mc *memColl) prepareReads() {
	mc.lazyMu.Lock()
	defer mc.lazyMu.Unlock()
	if mc.orderDirty {
		mc.order = mc.order[:0]
		it := mc.live.Iterator()
		for it.HasNext() {
			mc.order = append(mc.order, it.Next())
		}
		slices.SortFunc(mc.order, func(a, b uint32) int {
			oa, ob := mc.byDense[a].order, mc.byDense[b].order
			switch {
			case oa < ob:
				return -1
			case oa > ob:
				return 1
			}
			return 0
		})
		mc.orderDirty = false
	}
	if mc.idx.dirty() {
		mc.idx.prepare()
	}
}

// syncLocked makes memory reflect the file: it reloads the collection table
// when the global sequence moved and replays the change log into loaded
// collections (or reloads them from their snapshot when the log was trimmed
// past what they applied).
// REQUIRES: caller holds Store.mu exclusively.
func (s *Store) syncLocked(tx *bolt.Tx, force bool) error {
	if err := checkFormat(tx); err != nil {
		return err
	}
	seq := readSeq(tx)
	if !force && seq == s.mu.applied {
		return nil
	}
	infos := make(map[string]*collInfo)
	err := tx.Bucket(bktColls).ForEach(func(k, v []byte) error {
		ci, err := decodeCollInfo(v)
		if err != nil {
			return fmt.Errorf("collection %s: %w", k, err)
		}
		infos[string(k)] = ci
		return nil
	})
	if err != nil {
		return err
	}
	for id, mc := range s.mu.colls {
		ni := infos[id]
		switch {
		case ni == nil:
			delete(s.mu.colls, id)
		case ni.LastSeq == mc.applied:
			mc.info = ni
		case ni.SnapSeq > mc.applied || ni.LastSeq < mc.applied:
			nmc, err := s.loadCollLocked(tx, ni)
			if err != nil {
				return err
			}
			s.mu.colls[id] = nmc
			s.stats.reloads.Add(1)
		default:
			if err := s.replayLocked(tx, mc, ni); err != nil {
				return err
			}
		}
	}
	s.mu.infos = infos
	s.mu.applied = seq
	s.stats.syncs.Add(1)
	return nil
}

// replayLocked applies the change-log entries after mc.applied.
// REQUIRES: caller holds Store.mu exclusively.
func (s *Store) replayLocked(tx *bolt.Tx, mc *memColl, ni *collInfo) error {
	cb := tx.Bucket(collBucketName(ni.ID))
	if cb == nil {
		return corruptf(nil, "collection %s: missing data bucket", ni.ID)
	}
	// Another process may have trained the centroid table since mc
	// loaded: the rows replayed below are coded against it.
	if err := mc.syncCentroidsLocked(cb, ni); err != nil {
		return fmt.Errorf("collection %s: %w", ni.ID, err)
	}
	touched := make(map[string]struct{})
	c := cb.Bucket(subLog).Cursor()
	for k, v := c.Seek(u64(mc.applied + 1)); k != nil; k, v = c.Next() {
		ids, err := decodeLogEntry(v)
		if err != nil {
			return fmt.Errorf("collection %s: %w", ni.ID, err)
		}
		for _, id := range ids {
			touched[id] = struct{}{}
		}
	}
	states := make(map[string]*record, len(touched))
	vecs := make(map[uint32]graphVec)
	recB, vecB := cb.Bucket(subRec), cb.Bucket(subVec)
	for id := range touched {
		val := recB.Get([]byte(id))
		if val == nil {
			states[id] = nil
			continue
		}
		r, err := decodeRecord(id, val)
		if err != nil {
			return fmt.Errorf("collection %s: %w", ni.ID, err)
		}
		states[id] = r
		if old := mc.byID[id]; old == nil || old.dense != r.dense || old.vseq != r.vseq {
			v, err := readVector(vecB, ni, mc.cent, r.dense)
			if err != nil {
				return fmt.Errorf("collection %s: record %q: %w", ni.ID, id, err)
			}
			vecs[r.dense] = v
		}
	}
	mc.info = ni
	if err := s.applyStatesLocked(mc, states, vecs); err != nil {
		return err
	}
	mc.applied = ni.LastSeq
	return nil
}

// readVector reads dense id's vector in collection ci's code, as the graph
// takes it (see decodeGraphVec).
func readVector(vecB *bolt.Bucket, ci *collInfo, table []float32, dense uint32) (graphVec, error) {
	val := vecB.Get(u32(dense))
	if val == nil {
		return graphVec{}, corruptf(nil, "vector %d missing", dense)
	}
	return decodeGraphVec(ci, table, val, fmt.Sprintf("vector %d", dense))
}

// loadedLocked returns collection id loaded in memory, loading it if needed.
// REQUIRES: caller holds Store.mu exclusively.
func (s *Store) loadedLocked(tx *bolt.Tx, id string) (*memColl, error) {
	if mc := s.mu.colls[id]; mc != nil {
		return mc, nil
	}
	ci := s.mu.infos[id]
	if ci == nil {
		return nil, chroma.CollectionNotFoundByID(id)
	}
	mc, err := s.loadCollLocked(tx, ci)
	if err != nil {
		return nil, err
	}
	s.mu.colls[id] = mc
	return mc, nil
}

// loadCollLocked reads a collection's records and graph snapshot, then brings
// the graph up to date with the records (the log tail since the snapshot).
func (s *Store) loadCollLocked(tx *bolt.Tx, ci *collInfo) (*memColl, error) {
	cb := tx.Bucket(collBucketName(ci.ID))
	if cb == nil {
		return nil, corruptf(nil, "collection %s: missing data bucket", ci.ID)
	}
	mc := newMemColl(ci)
	t0 := time.Now()
	var tSnap time.Duration
	// Decompress and decode the graph snapshot while the records are read.
	var raw []byte
	var snapErr error
	var wg sync.WaitGroup
	if ci.SnapSeq > 0 && ci.Dimension > 0 {
		comp, err := readSnapshotBytes(cb.Bucket(subSnap), ci)
		if err != nil {
			return nil, fmt.Errorf("collection %s: %w (Repair rebuilds the graph from the stored vectors)", ci.ID, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t1 := time.Now()
			if ci.SnapRaw {
				raw = comp
			} else {
				raw, snapErr = decompressSnapshot(comp)
			}
			tSnap = time.Since(t1)
		}()
	}
	err := cb.Bucket(subRec).ForEach(func(k, v []byte) error {
		r, err := decodeRecord(string(k), v)
		if err != nil {
			return err
		}
		if int(r.dense) < len(mc.byDense) && mc.byDense[r.dense] != nil {
			return corruptf(nil, "records %q and %q share dense id %d", mc.byDense[r.dense].id, r.id, r.dense)
		}
		mc.setRecordLocked(r)
		return nil
	})
	tRecs := time.Since(t0)
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("collection %s: %w", ci.ID, err)
	}
	vecB := cb.Bucket(subVec)
	if ci.Config.HNSW.VectorCode == chroma.CodeSQ8R {
		if mc.cent, err = readCentroids(cb, ci); err != nil {
			return nil, fmt.Errorf("collection %s: %w (Repair rebuilds the collection from its readable rows)", ci.ID, err)
		}
	}
	if raw != nil || snapErr != nil {
		var g *index.Index
		if snapErr == nil {
			// index asks for the vectors in increasing id order, the
			// bucket's key order: one pass of a cursor instead of a
			// lookup per vector.
			cur := vecB.Cursor()
			k, v := cur.First()
			g, snapErr = decodeSnapshot(raw, ci, func(d uint32) (graphVec, error) {
				if !mc.live.Contains(d) {
					return graphVec{}, nil // deleted since the snapshot
				}
				if r := mc.byDense[d]; r != nil && r.vseq > ci.SnapSeq {
					// Written since the snapshot (replaced, or the slot
					// reused): inserted afresh below. Its row may be coded
					// against a centroid table the snapshot predates.
					return graphVec{}, nil
				}
				for k != nil && u32key(k) < d {
					k, v = cur.Next()
				}
				if k == nil || u32key(k) != d {
					return graphVec{}, corruptf(nil, "vector %d missing", d)
				}
				return decodeGraphVec(ci, mc.cent, v, fmt.Sprintf("vector %d", d))
			})
		}
		if snapErr != nil {
			return nil, fmt.Errorf("collection %s: %w (Repair rebuilds the graph from the stored vectors)", ci.ID, snapErr)
		}
		for d := uint32(0); d < ci.SnapNext; d++ {
			if g.Contains(d) && !mc.live.Contains(d) {
				if err := g.Delete(d); err != nil {
					return nil, err
				}
			}
		}
		mc.graph = g
		if mc.cent != nil {
			if err := mc.installCentroidsLocked(mc.cent); err != nil {
				return nil, err
			}
		} else if g.Options().Code == index.SQ8Residual && g.Centroids() != nil {
			return nil, corruptf(nil, "collection %s: centroid table missing (Repair rebuilds the collection from its readable rows)", ci.ID)
		}
	}
	var ids []uint32
	var vs []graphVec
	for _, r := range mc.byID {
		if mc.graph != nil && r.vseq <= ci.SnapSeq && mc.graph.Contains(r.dense) {
			continue
		}
		v, err := readVector(vecB, ci, mc.cent, r.dense)
		if err != nil {
			return nil, fmt.Errorf("collection %s: record %q: %w", ci.ID, r.id, err)
		}
		ids = append(ids, r.dense)
		vs = append(vs, v)
	}
	if err := s.insertVectorsLocked(mc, ids, vs); err != nil {
		return nil, err
	}
	mc.applied = ci.LastSeq
	s.log.Debug("vecstore: collection loaded", "collection", ci.ID, "records", len(mc.byID),
		"records_read", tRecs, "snapshot_decode", tSnap, "reinserted", len(ids), "total", time.Since(t0))
	return mc, nil
}

// readSnapshotBytes returns the snapshot's bytes and verifies their length
// and checksum: a snapshot in one chunk where it lies in the transaction
// (valid while it is open), one in several chunks copied out of it.
func readSnapshotBytes(sb *bolt.Bucket, ci *collInfo) ([]byte, error) {
	if sb == nil {
		return nil, corruptf(nil, "graph snapshot missing")
	}
	if ci.SnapChunks == 1 {
		p := sb.Get(u32(0))
		switch {
		case p == nil:
			return nil, corruptf(nil, "graph snapshot chunk 0 missing")
		case int64(len(p)) != ci.SnapLen:
			return nil, corruptf(nil, "graph snapshot length %d, want %d", len(p), ci.SnapLen)
		case crc(p) != ci.SnapCRC:
			return nil, corruptf(nil, "graph snapshot checksum mismatch")
		}
		return p, nil
	}
	var buf bytes.Buffer
	buf.Grow(int(ci.SnapLen))
	for i := 0; i < ci.SnapChunks; i++ {
		p := sb.Get(u32(uint32(i)))
		if p == nil {
			return nil, corruptf(nil, "graph snapshot chunk %d missing", i)
		}
		buf.Write(p)
	}
	if int64(buf.Len()) != ci.SnapLen {
		return nil, corruptf(nil, "graph snapshot length %d, want %d", buf.Len(), ci.SnapLen)
	}
	if got := crc(buf.Bytes()); got != ci.SnapCRC {
		return nil, corruptf(nil, "graph snapshot checksum mismatch")
	}
	return buf.Bytes(), nil
}

// decompressSnapshot decompresses a graph snapshot.
func decompressSnapshot(comp []byte) ([]byte, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(1<<36))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	raw, err := dec.DecodeAll(comp, nil)
	if err != nil {
		return nil, corruptf(err, "graph snapshot: decompress")
	}
	return raw, nil
}

// decodeSnapshot decodes a decompressed graph snapshot of collection ci,
// taking the vectors of a graph-only snapshot from vector, and brings the
// graph to the collection's code (a snapshot written before a Recode, or
// by format version 1, holds another). An sq8r collection's snapshot is
// always graph-only and sq8r (Recode and Repair write one with the code).
func decodeSnapshot(raw []byte, ci *collInfo, vector func(uint32) (graphVec, error)) (*index.Index, error) {
	var g *index.Index
	var err error
	switch {
	case ci.Config.HNSW.VectorCode == chroma.CodeSQ8R && !ci.SnapGraph:
		return nil, corruptf(nil, "graph snapshot of an sq8r collection holds its vectors")
	case ci.Config.HNSW.VectorCode == chroma.CodeSQ8R:
		g, err = index.UnmarshalGraphRows(raw, func(d uint32) ([]byte, error) {
			gv, err := vector(d)
			return gv.row, err
		})
	case ci.SnapGraph:
		g, err = index.UnmarshalGraph(raw, func(d uint32) ([]float32, error) {
			gv, err := vector(d)
			return gv.v, err
		})
	default:
		g, err = index.Unmarshal(raw)
	}
	if err != nil {
		var ce *chroma.Error
		if errors.As(err, &ce) {
			return nil, err // a damaged vector, already a vecstore corruption
		}
		return nil, corruptf(err, "graph snapshot: decode")
	}
	if g.Options().Dim != ci.Dimension || g.Options().Space != indexSpace(ci.Config.HNSW.Space) {
		return nil, corruptf(nil, "graph snapshot does not match the collection (dim %d space %v)",
			g.Options().Dim, g.Options().Space)
	}
	if err := g.Recode(indexCode(ci.Config.HNSW)); err != nil {
		return nil, err
	}
	return g, nil
}

func compressSnapshot(raw []byte) ([]byte, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(2))
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	// Graph snapshots are mostly neighbour ids, which zstd barely
	// compresses: size the output for the worst case so that EncodeAll
	// never regrows it (regrowing was 70% of the compression CPU).
	return enc.EncodeAll(raw, make([]byte, 0, enc.MaxEncodedSize(len(raw)))), nil
}

var errNoSnapshotNeeded = errors.New("vecstore: snapshot not needed")

// freshInfo reads a collection's info from the transaction. Writers must
// start from it, not from memory: a snapshot written by another process
// changes the snapshot fields.
func freshInfo(tx *bolt.Tx, cid string) (*collInfo, error) {
	b := tx.Bucket(bktColls).Get([]byte(cid))
	if b == nil {
		return nil, chroma.CollectionNotFoundByID(cid)
	}
	ci, err := decodeCollInfo(b)
	if err != nil {
		return nil, fmt.Errorf("collection %s: %w", cid, err)
	}
	return ci, nil
}
