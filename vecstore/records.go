package vecstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cairn-dev/cairn/index"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	bolt "go.etcd.io/bbolt"
)

func cloneStr(p *string) *string {
	if p == nil {
		return nil
	}
	s := *p
	return &s
}

// Add inserts records. Ids already in the collection are silently ignored,
// and within one batch the first occurrence of an id wins (Chroma 1.0.0).
func (s *Store) Add(ctx context.Context, collID string, req chroma.AddRequest) error {
	if req.Embeddings == nil {
		return chroma.Missing("embeddings")
	}
	return s.write(ctx, collID, chroma.WriteAdd, chroma.UpdateRequest(req))
}

// Upsert inserts new ids and replaces existing ones: the embedding is
// replaced, metadata merged key by key (Null deletes a key), document and uri
// replaced when given. Records keep their position in insertion order.
func (s *Store) Upsert(ctx context.Context, collID string, req chroma.AddRequest) error {
	if req.Embeddings == nil {
		return chroma.Missing("embeddings")
	}
	return s.write(ctx, collID, chroma.WriteUpsert, chroma.UpdateRequest(req))
}

// Update changes existing records (unknown ids ignored) with Upsert's merge
// rules; nil entries keep the old value.
func (s *Store) Update(ctx context.Context, collID string, req chroma.UpdateRequest) error {
	return s.write(ctx, collID, chroma.WriteUpdate, req)
}

// write is Add, Upsert and Update: it checks the batch, stages the new
// record states, persists them with one change-log entry, and applies them to
// memory once the transaction commits.
func (s *Store) write(ctx context.Context, collID string, kind chroma.WriteKind, req chroma.UpdateRequest) error {
	cid, err := chroma.ParseCollectionID(collID)
	if err != nil {
		return err
	}
	dim, refusal, err := chroma.CheckWrite(kind, req)
	if err != nil {
		return err
	}
	if refusal != nil && dim == 0 {
		return refusal // no dimension to check or fix
	}
	var snapshotDue bool
	err = s.writeOp(ctx, func(tx *bolt.Tx) (func(), error) {
		if s.mu.infos[cid] == nil {
			return nil, chroma.CollectionNotFoundByID(cid)
		}
		if len(req.IDs) == 0 && refusal == nil {
			return nil, nil
		}
		mc, err := s.loadedLocked(tx, cid)
		if err != nil {
			return nil, err
		}
		ci, err := freshInfo(tx, cid)
		if err != nil {
			return nil, err
		}
		info := *ci
		if err := adoptVectors(&info, mc, dim, req.Model); err != nil {
			return nil, err
		}
		seq := readSeq(tx) + 1
		dimFixed := false
		if dim > 0 && info.Dimension == 0 {
			info.Dimension = dim
			dimFixed = true
		}
		if refusal != nil {
			if dimFixed {
				return s.fixDimensionThenRefuse(tx, mc, cid, info, refusal)
			}
			return nil, refusal
		}
		bs, err := openRecordBuckets(tx, cid)
		if err != nil {
			return nil, err
		}
		st := stageWriteLocked(mc, &info, kind, req, seq)
		if len(st.touched) == 0 && !dimFixed {
			return nil, nil
		}
		coder, err := s.trainIfDueLocked(tx, mc, &info, st)
		if err != nil {
			return nil, err
		}
		table := mc.cent
		if st.cent != nil {
			table = st.cent
		}
		if err := st.persist(tx, bs, &info, seq, coder, table); err != nil {
			return nil, err
		}
		info.LastSeq = seq
		info.OpsSinceSnap += len(st.touched)
		if err := putCollInfo(tx, &info); err != nil {
			return nil, err
		}
		live := len(mc.byID) + len(st.touched)
		snapshotDue = info.OpsSinceSnap >= s.opts.SnapshotMinOps &&
			float64(info.OpsSinceSnap) >= s.opts.SnapshotRatio*float64(live)
		ni := info
		return func() {
			s.mu.infos[cid] = &ni
			mc.info = &ni
			err := error(nil)
			if st.cent != nil {
				err = mc.installCentroidsLocked(st.cent)
				mc.coder = st.coder
			}
			if err == nil {
				err = s.applyStatesLocked(mc, st.states, st.graph)
			}
			if err != nil {
				// The write is committed; memory is rebuilt from the file on
				// the next access.
				s.log.Error("vecstore: applying a committed write to memory failed; reloading", "collection", cid, "err", err)
				delete(s.mu.colls, cid)
				return
			}
			mc.applied = seq
		}, nil
	})
	if err == nil && snapshotDue {
		if serr := s.snapshot(ctx, cid); serr != nil && serr != errNoSnapshotNeeded {
			s.log.Warn("vecstore: graph snapshot failed", "collection", cid, "err", serr)
		}
	}
	return err
}

// adoptVectors checks embeddings of dimension dim from model against the
// collection, and records model on a collection that has never held a
// vector.
func adoptVectors(info *collInfo, mc *memColl, dim int, model string) error {
	c := info.vectorShape()
	if err := chroma.AdoptVectors(&c, len(mc.byID) == 0, dim, model); err != nil {
		return err
	}
	info.Model = c.Model // the dimension is the caller's to fix (write)
	return nil
}

// fixDimensionThenRefuse commits the dimension just fixed in info and then
// fails with refusal: Chroma fixes the dimension before refusing the batch.
func (s *Store) fixDimensionThenRefuse(tx *bolt.Tx, mc *memColl, cid string, info collInfo, refusal error) (func(), error) {
	if _, err := nextSeq(tx); err != nil {
		return nil, err
	}
	if err := putCollInfo(tx, &info); err != nil {
		return nil, err
	}
	after := func() { s.mu.infos[cid] = &info; mc.info = &info; mc.applied = info.LastSeq }
	return after, &commitThenFail{refusal}
}

// writeStage holds the record states a write produces, before they are
// persisted or applied to memory.
type writeStage struct {
	states  map[string]*record   // new state by id
	vecs    map[uint32][]float32 // new vectors by dense id, as written
	graph   map[uint32]graphVec  // what the graph is given for them (persist)
	touched []string             // ids in first-touched order
	// cent and coder: the centroid table this write trained (an sq8r
	// collection reaching index.TrainRows vectors) and the index that
	// coded its rows against it; nil when it trained none.
	cent  []float32
	coder *index.Index
}

// stageWriteLocked computes the new state of every record the batch changes.
// New records take dense ids from memory's free set first, then fresh ones,
// and insertion order from info.NextOrder.
//
// REQUIRES: Store.mu held exclusively.
func stageWriteLocked(mc *memColl, info *collInfo, kind chroma.WriteKind, req chroma.UpdateRequest, seq uint64) *writeStage {
	freeIt := mc.free.Iterator()
	nextDense := uint32(len(mc.byDense))
	alloc := func() uint32 {
		if freeIt.HasNext() {
			return freeIt.Next()
		}
		d := nextDense
		nextDense++
		return d
	}
	st := &writeStage{states: make(map[string]*record), vecs: make(map[uint32][]float32)}
	current := func(id string) *record {
		if r, ok := st.states[id]; ok {
			return r
		}
		return mc.byID[id]
	}
	for i, id := range req.IDs {
		var md chroma.Metadata
		if req.Metadatas != nil {
			md = req.Metadatas[i]
		}
		md, reservedDoc := chroma.SplitReserved(md)
		var doc, uri *string
		if req.Documents != nil {
			doc = cloneStr(req.Documents[i])
		}
		if doc == nil && reservedDoc != nil {
			doc = reservedDoc
		}
		if req.URIs != nil {
			uri = cloneStr(req.URIs[i])
		}
		var emb []float32
		if req.Embeddings != nil {
			emb = req.Embeddings[i]
		}
		old := current(id)
		var r *record
		switch {
		case old == nil && kind == chroma.WriteUpdate:
			continue
		case old != nil && kind == chroma.WriteAdd:
			continue
		case old == nil:
			r = &record{id: id, dense: alloc(), order: info.NextOrder, vseq: seq, doc: doc, uri: uri}
			info.NextOrder++
			r.meta = chroma.MergeMetadata(nil, md)
		default:
			nr := *old
			r = &nr
			if doc != nil {
				r.doc = doc
			}
			if uri != nil {
				r.uri = uri
			}
			r.meta = chroma.MergeMetadata(old.meta, md)
			if emb != nil {
				r.vseq = seq
			}
		}
		if _, seen := st.states[id]; !seen {
			st.touched = append(st.touched, id)
		}
		st.states[id] = r
		if emb != nil {
			st.vecs[r.dense] = append([]float32(nil), emb...)
			r.norm = vecNorm(emb)
		}
	}
	return st
}

// recordBuckets are a collection's record, vector and change-log buckets.
type recordBuckets struct{ rec, vec, log *bolt.Bucket }

// openRecordBuckets opens collection cid's buckets for a write.
func openRecordBuckets(tx *bolt.Tx, cid string) (recordBuckets, error) {
	cb := tx.Bucket(collBucketName(cid))
	if cb == nil {
		return recordBuckets{}, corruptf(nil, "collection %s: missing data bucket", cid)
	}
	bs := recordBuckets{rec: cb.Bucket(subRec), vec: cb.Bucket(subVec), log: cb.Bucket(subLog)}
	fillBuckets(bs.rec, bs.vec, bs.log)
	return bs, nil
}

// persist writes the staged records, their vectors and, when any record
// changed, the change-log entry seq, and takes seq from the store's sequence.
// Vectors are encoded in the collection's code (ci; sq8r rows by coder,
// against table);
// st.graph gets what the graph should hold for each (see encodeStored).
func (st *writeStage) persist(tx *bolt.Tx, bs recordBuckets, ci *collInfo, seq uint64, coder *index.Index, table []float32) error {
	if _, err := nextSeq(tx); err != nil {
		return err
	}
	st.graph = make(map[uint32]graphVec, len(st.vecs))
	for _, id := range st.touched {
		r := st.states[id]
		if err := bs.rec.Put([]byte(id), encodeRecord(r)); err != nil {
			return err
		}
		if v, ok := st.vecs[r.dense]; ok {
			val, gv, err := encodeStored(ci, coder, table, v)
			if err != nil {
				return err
			}
			if err := bs.vec.Put(u32(r.dense), val); err != nil {
				return err
			}
			st.graph[r.dense] = gv
		}
	}
	if len(st.touched) > 0 {
		if err := bs.log.Put(u64(seq), encodeLogEntry(st.touched)); err != nil {
			return err
		}
	}
	return nil
}

// trainIfDueLocked returns the index that codes the write's rows in an
// sq8r collection (nil for other codes). The write that brings the
// collection to index.TrainRows vectors first trains the centroid table
// on every vector it will hold (the graph's, decoded, and the staged
// ones) and stores the table in its transaction (st.cent, st.coder: memory
// takes them once it commits); rows written before keep no centroid.
// REQUIRES: Store.mu held exclusively.
func (s *Store) trainIfDueLocked(tx *bolt.Tx, mc *memColl, ci *collInfo, st *writeStage) (*index.Index, error) {
	if ci.Config.HNSW.VectorCode != chroma.CodeSQ8R || len(st.vecs) == 0 {
		return nil, nil
	}
	cb := tx.Bucket(collBucketName(ci.ID))
	if err := mc.syncCentroidsLocked(cb, ci); err != nil {
		return nil, fmt.Errorf("collection %s: %w", ci.ID, err)
	}
	coder, err := s.rowCoderLocked(mc, ci)
	if err != nil || mc.cent != nil {
		return coder, err
	}
	n := len(mc.byID)
	for id, r := range st.states {
		if r != nil && mc.byID[id] == nil {
			n++
		}
	}
	if n < index.TrainRows {
		return coder, nil
	}
	vecs := make([][]float32, 0, n)
	for _, v := range st.vecs {
		vecs = append(vecs, v)
	}
	if mc.graph != nil {
		for _, r := range mc.byID {
			if _, restaged := st.vecs[r.dense]; restaged {
				continue
			}
			if ns, ok := st.states[r.id]; ok && (ns == nil || ns.dense != r.dense) {
				continue
			}
			if v, ok := mc.graph.Vector(r.dense); ok {
				vecs = append(vecs, v)
			}
		}
	}
	if len(vecs) < index.TrainRows {
		return coder, nil
	}
	trained, err := coder.TrainCentroids(vecs)
	if err != nil {
		return nil, fmt.Errorf("vecstore: collection %s: train centroids: %w", ci.ID, err)
	}
	val, err := encodeCentroids(trained, ci.Dimension)
	if err != nil {
		return nil, err
	}
	table, err := decodeCentroids(val, ci.Dimension)
	if err != nil {
		return nil, err
	}
	if err := cb.Put(keyCentroids, val); err != nil {
		return nil, err
	}
	if st.coder, err = s.newGraph(ci); err != nil {
		return nil, err
	}
	if err := st.coder.SetCentroids(table); err != nil {
		return nil, fmt.Errorf("vecstore: collection %s: %w", ci.ID, err)
	}
	st.cent = table
	return st.coder, nil
}

// Delete deletes the records matching req. With nothing set it deletes
// nothing; with an empty IDs list and no filter it is an error (Chroma).
func (s *Store) Delete(ctx context.Context, collID string, req chroma.DeleteRequest) error {
	cid, err := chroma.ParseCollectionID(collID)
	if err != nil {
		return err
	}
	if err := chroma.CheckDelete(req); err != nil {
		return err
	}
	scan, err := s.scanDocuments(ctx, cid, req.IDs, req.Where, req.WhereDocument, req.MaxScanBytes)
	if err != nil {
		return err
	}
	return s.deleteOp(ctx, func(tx *bolt.Tx) (func(), error) {
		if s.mu.infos[cid] == nil {
			return nil, chroma.CollectionNotFoundByID(cid)
		}
		if req.IDs == nil && req.Where == nil && req.WhereDocument == nil {
			return nil, nil
		}
		mc, err := s.loadedLocked(tx, cid)
		if err != nil {
			return nil, err
		}
		mc.prepareReads()
		set, _, err := mc.filterLocked(ctx, req.IDs, req.Where, req.WhereDocument, scan)
		if err != nil {
			return nil, err
		}
		if set.IsEmpty() {
			return nil, nil
		}
		seq, err := nextSeq(tx)
		if err != nil {
			return nil, err
		}
		cb := tx.Bucket(collBucketName(cid))
		recB, vecB, logB := cb.Bucket(subRec), cb.Bucket(subVec), cb.Bucket(subLog)
		fillBuckets(recB, vecB, logB)
		states := make(map[string]*record)
		var touched []string
		it := set.Iterator()
		for it.HasNext() {
			d := it.Next()
			r := mc.byDense[d]
			if err := recB.Delete([]byte(r.id)); err != nil {
				return nil, err
			}
			if err := vecB.Delete(u32(d)); err != nil {
				return nil, err
			}
			states[r.id] = nil
			touched = append(touched, r.id)
		}
		if err := logB.Put(u64(seq), encodeLogEntry(touched)); err != nil {
			return nil, err
		}
		ci, err := freshInfo(tx, cid)
		if err != nil {
			return nil, err
		}
		info := *ci
		info.LastSeq = seq
		info.OpsSinceSnap += len(touched)
		if err := putCollInfo(tx, &info); err != nil {
			return nil, err
		}
		return func() {
			s.mu.infos[cid] = &info
			mc.info = &info
			_ = s.applyStatesLocked(mc, states, nil)
			mc.applied = seq
		}, nil
	})
}

// Count returns the number of records.
func (s *Store) Count(ctx context.Context, collID string) (int, error) {
	cid, err := chroma.ParseCollectionID(collID)
	if err != nil {
		return 0, err
	}
	var n int
	err = s.readOp(ctx, cid, func() error {
		mc := s.mu.colls[cid]
		if mc == nil {
			return chroma.CollectionNotFoundByID(cid)
		}
		n = len(mc.byID)
		return nil
	})
	return n, err
}

// Get returns records in insertion order after filtering, offset and limit.
func (s *Store) Get(ctx context.Context, collID string, req chroma.GetRequest) (*chroma.GetResult, error) {
	cid, err := chroma.ParseCollectionID(collID)
	if err != nil {
		return nil, err
	}
	inc, incSet, err := chroma.CheckIncludes(req.Include, []chroma.Include{chroma.IncludeDocuments, chroma.IncludeMetadatas})
	if err != nil {
		return nil, err
	}
	if err := chroma.CheckPage(req.Limit, req.Offset); err != nil {
		return nil, err
	}
	if err := chroma.CheckFilters(req.Where, req.WhereDocument); err != nil {
		return nil, err
	}
	if req.IDs != nil && req.Where == nil && req.WhereDocument == nil && s.inPlaceOK(cid) {
		if res, err := s.getInPlace(ctx, cid, req, inc, incSet); !errors.Is(err, errNotInPlace) {
			return res, err
		}
	}
	scan, err := s.scanDocuments(ctx, cid, req.IDs, req.Where, req.WhereDocument, req.MaxScanBytes)
	if err != nil {
		return nil, err
	}
	var res *chroma.GetResult
	err = s.readOp(ctx, cid, func() error {
		mc := s.mu.colls[cid]
		if mc == nil {
			return chroma.CollectionNotFoundByID(cid)
		}
		mc.prepareReads()
		set, _, err := mc.filterLocked(ctx, req.IDs, req.Where, req.WhereDocument, scan)
		if err != nil {
			return err
		}
		if req.IDs != nil && set.GetCardinality() < uint64(len(mc.order))/8 {
			// A few ids: sort their records by insertion order rather
			// than walk every record's place in it.
			res = getByOrder(mc, set, req, inc, incSet)
			return nil
		}
		budget := chroma.NewAnswerBudget(req.MaxAnswerBytes)
		var sel []*record
		skip := req.Offset
		for i, d := range mc.order {
			if i%(16*cancelEvery) == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if !set.Contains(d) {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			if req.Limit != nil && len(sel) >= *req.Limit {
				break
			}
			sel = append(sel, mc.byDense[d])
		}
		res = chroma.NewGetResult(inc, incSet, len(sel))
		for _, r := range sel {
			if mc.appendRecordLocked(res, r); budget.Spend(res) {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// getByOrder is Get's answer for a set of records named by id: the same
// records, in the same insertion order, with the same offset and limit as
// the walk over mc.order, in time proportional to the set.
func getByOrder(mc *memColl, set *roaring.Bitmap, req chroma.GetRequest, inc []chroma.Include, incSet map[chroma.Include]bool) *chroma.GetResult {
	sel := make([]*record, 0, set.GetCardinality())
	it := set.Iterator()
	for it.HasNext() {
		sel = append(sel, mc.byDense[it.Next()])
	}
	slices.SortFunc(sel, func(a, b *record) int { return cmp.Compare(a.order, b.order) })
	sel = sel[min(req.Offset, len(sel)):]
	if req.Limit != nil && len(sel) > *req.Limit {
		sel = sel[:*req.Limit]
	}
	res := chroma.NewGetResult(inc, incSet, len(sel))
	budget := chroma.NewAnswerBudget(req.MaxAnswerBytes)
	for _, r := range sel {
		if mc.appendRecordLocked(res, r); budget.Spend(res) {
			break
		}
	}
	return res
}

// appendRecordLocked adds r to the included fields of res.
//
// REQUIRES: Store.mu held shared.
func (mc *memColl) appendRecordLocked(res *chroma.GetResult, r *record) {
	res.IDs = append(res.IDs, r.id)
	if res.Embeddings != nil {
		res.Embeddings = append(res.Embeddings, mc.vector(r.dense))
	}
	if res.Documents != nil {
		res.Documents = append(res.Documents, cloneStr(r.doc))
	}
	if res.URIs != nil {
		res.URIs = append(res.URIs, cloneStr(r.uri))
	}
	if res.Metadatas != nil {
		res.Metadatas = append(res.Metadatas, chroma.ResultMetadata(r.meta, r.uri))
	}
}

// vector returns a record's embedding. Cosine graphs hold normalized
// vectors; like Chroma, the vector is scaled back by its stored norm (so it
// reads back as given up to float32 round-off).
func (mc *memColl) vector(d uint32) []float32 {
	if mc.graph == nil {
		return nil
	}
	v, _ := mc.graph.Vector(d)
	if mc.info.Config.HNSW.Space == chroma.SpaceCosine && v != nil {
		if r := mc.byDense[d]; r != nil && r.norm > 0 {
			for i := range v {
				v[i] *= r.norm
			}
		}
	}
	return v
}

// Peek returns the first limit records in insertion order with the default
// include (Chroma's client-side peek; limit 10 when 0).
func (s *Store) Peek(ctx context.Context, collID string, limit int) (*chroma.GetResult, error) {
	if limit == 0 {
		limit = 10
	}
	return s.Get(ctx, collID, chroma.GetRequest{Limit: &limit})
}

// Query returns, for each query embedding, the NResults nearest records among
// those matching the filters, by ascending distance. Filters are evaluated
// first (metadata index, then documents); the planner then scans the allowed
// set exactly when it is small, and runs filtered HNSW otherwise.
func (s *Store) Query(ctx context.Context, collID string, req chroma.QueryRequest) (*chroma.QueryResult, error) {
	cid, err := chroma.ParseCollectionID(collID)
	if err != nil {
		return nil, err
	}
	qa, err := chroma.CheckQuery(req)
	if err != nil {
		return nil, err
	}
	if req.IDs == nil && req.WhereDocument == nil && s.inPlaceOK(cid) {
		if res, err := s.queryInPlace(ctx, cid, req, qa); !errors.Is(err, errNotInPlace) {
			return res, err
		}
	}
	scan, err := s.scanDocuments(ctx, cid, req.IDs, req.Where, req.WhereDocument, req.MaxScanBytes)
	if err != nil {
		return nil, err
	}
	res := chroma.NewQueryResult(qa.Include, qa.Included, len(req.Embeddings))
	err = s.readOp(ctx, cid, func() error {
		mc := s.mu.colls[cid]
		if mc == nil {
			return chroma.CollectionNotFoundByID(cid)
		}
		if err := chroma.CheckQueryVectors(mc.info.vectorShape(), req, qa.Dim); err != nil {
			return err
		}
		mc.prepareReads()
		var allowed *roaring.Bitmap
		if req.IDs != nil || req.Where != nil || req.WhereDocument != nil {
			var unknown bool
			var err error
			allowed, unknown, err = mc.filterLocked(ctx, req.IDs, req.Where, req.WhereDocument, scan)
			if err != nil {
				return err
			}
			if unknown {
				return chroma.UnknownQueryID()
			}
		}
		budget := chroma.NewAnswerBudget(req.MaxAnswerBytes)
		for _, q := range req.Embeddings {
			if err := ctx.Err(); err != nil {
				return err
			}
			hits, err := s.search(mc, q, qa.K, allowed, req.WhereDocument != nil)
			if err != nil {
				return err
			}
			if over, err := mc.appendHitsLocked(res, hits, qa.Included, budget); err != nil || over {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// appendHitsLocked adds one query's hits to res as its next row; over
// reports that budget is spent (the row is cut short there).
//
// REQUIRES: Store.mu held shared.
func (mc *memColl) appendHitsLocked(res *chroma.QueryResult, hits []index.Result, incSet map[chroma.Include]bool, budget *chroma.AnswerBudget) (over bool, err error) {
	row := chroma.NewGetResult(nil, incSet, len(hits))
	var dists []float32
	if res.Distances != nil {
		dists = make([]float32, 0, len(hits))
	}
	for _, h := range hits {
		r := mc.byDense[h.ID]
		if r == nil {
			return false, fmt.Errorf("vecstore: index returned id %d with no record: %w", h.ID, chroma.ErrCorrupt)
		}
		mc.appendRecordLocked(row, r)
		if dists != nil {
			dists = append(dists, h.Distance)
		}
		if over = budget.Spend(row); over {
			break
		}
	}
	res.AppendRow(row, dists)
	return over, nil
}

// search is the planner: nil allowed means every record. docFiltered says
// that allowed came out of a where_document scan.
//
// index.Search picks a path for a filter from the allowed set's selectivity
// (an exact scan, split across cores, up to 4096 ids or below 25%; the
// filtered graph walk above). vecstore scans exactly where it knows better
// and hands the rest to index.Search:
//   - unfiltered queries on collections of at most Options.ExactMax
//     records;
//   - allowed sets of at most k or Options.ExactMax records, or below
//     Options.ExactRatio of the collection;
//   - the cost model of exactIsCheaper (about 25% selectivity at 100,000
//     records, beam 200, M 16), unless Options.DelegateFiltered;
//   - where_document filters up to 30%: the allowed set
//     was just produced by reading each candidate's document, which costs
//     more than a distance, and the exact answer does not depend on how the
//     text correlates with the query.
//
// REQUIRES: Store.mu held shared.
func (s *Store) search(mc *memColl, q []float32, k int, allowed *roaring.Bitmap, docFiltered bool) ([]index.Result, error) {
	if k == 0 || mc.graph == nil || len(mc.byID) == 0 {
		return nil, nil
	}
	n := len(mc.byID)
	ef := s.beam(mc.info.Config.HNSW, k)
	if allowed == nil {
		if n <= s.opts.ExactMax {
			// A small collection is scanned whole: as cheap as a graph walk
			// at this beam, and exact (Chroma answers small collections by
			// brute force too).
			s.stats.exact.Add(1)
			return mc.graph.Exact(q, k, nil)
		}
		s.stats.hnsw.Add(1)
		return mc.graph.Search(q, k, index.SearchOptions{Ef: ef})
	}
	card := int(allowed.GetCardinality())
	if card == 0 {
		return nil, nil
	}
	if s.scanExactly(mc.info, card, n, k, ef, docFiltered) {
		s.stats.exact.Add(1)
		return mc.graph.Exact(q, k, allowed)
	}
	// index.Search chooses between its exact scan and its filtered walk,
	// which keeps expanding until it holds ef allowed candidates, so ef
	// needs no widening here.
	s.stats.hnsw.Add(1)
	return mc.graph.Search(q, k, index.SearchOptions{Ef: ef, Allow: allowed})
}

// scanExactly is the planner's choice for a filter allowing card of a
// collection's n records: scan them exactly rather than hand them to
// index.Search (which may still scan them exactly, see index.PlanFiltered).
func (s *Store) scanExactly(ci *collInfo, card, n, k, ef int, docFiltered bool) bool {
	return card <= k || card <= s.opts.ExactMax || float64(card) < s.opts.ExactRatio*float64(n) ||
		(docFiltered && 10*card <= 3*n) ||
		(!s.opts.DelegateFiltered && exactIsCheaper(card, n, ef, ci.Config.HNSW.MaxNeighbors))
}

// beam is the candidate list size for a query of k results in a
// collection configured with cfg: Options.BeamFactor x ef_search (and
// sq8Beam times that for SQ8 and sq8r collections), never below k and within
// index's bound.
func (s *Store) beam(cfg chroma.HNSWConfig, k int) int {
	f := s.opts.BeamFactor
	if cfg.VectorCode == chroma.CodeSQ8 || cfg.VectorCode == chroma.CodeSQ8R {
		f *= sq8Beam
	}
	ef := min(int(math.Round(f*float64(cfg.EfSearch))), 1<<16)
	return max(ef, k, 1)
}

// exactIsCheaper is the planner's cost model. An exact scan computes card
// distances. A filtered HNSW walk visits about ef x 2M nodes per layer-0
// expansion and, with a filter passing a fraction sel = card/n of the
// records, must expand about 1/sel times more nodes to collect ef allowed
// ones: ef x 2M / sel distances. Exact wins when card <= ef x 2M / sel, i.e. card^2 <= ef x 2M x n.
func exactIsCheaper(card, n, ef, m int) bool {
	return float64(card)*float64(card) <= float64(ef)*float64(2*m)*float64(n)
}

// Stats returns counters describing the store.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := Stats{Collections: len(s.mu.colls), AppliedSeq: s.mu.applied,
		Syncs: s.stats.syncs.Load(), FullReloads: s.stats.reloads.Load(), Snapshots: s.stats.snapshots.Load(),
		ExactQueries: s.stats.exact.Load(), FilteredHNSW: s.stats.hnsw.Load(), InPlaceReads: s.stats.inPlace.Load()}
	for _, mc := range s.mu.colls {
		st.Records += len(mc.byID)
	}
	return st
}
