package vecstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cairn-dev/cairn/index"
	"github.com/cairn-dev/cairn/vecstore/where"
	bolt "go.etcd.io/bbolt"
)

const reservedPrefix = "chroma:"

func errInconsistentLengths() *Error {
	return invalidErr(RuleLengths, "ids", "ids, embeddings, documents, uris and metadatas must have the same length")
}

// checkLengths verifies that every present field is parallel to ids.
func checkLengths(n int, embs int, embsSet bool, docs []*string, uris []*string, metas []Metadata) error {
	if (embsSet && embs != n) || (docs != nil && len(docs) != n) || (uris != nil && len(uris) != n) ||
		(metas != nil && len(metas) != n) {
		return errInconsistentLengths()
	}
	return nil
}

// checkEmbeddings validates a batch of vectors (nil entries skipped) and
// returns their common dimension (0 if none).
func checkEmbeddings(embs [][]float32) (int, error) {
	dim := 0
	for _, e := range embs {
		if e != nil && len(e) == 0 {
			return 0, invalidErr(RuleEmptyVector, "embeddings", "each embedding must have at least 1 dimension")
		}
	}
	for _, e := range embs {
		if e == nil {
			continue
		}
		if dim == 0 {
			dim = len(e)
		} else if len(e) != dim {
			return 0, invalidErr(RuleMixedDims, "embeddings", "all embeddings must have the same dimension")
		}
		for _, f := range e {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return 0, invalidErr(RuleNonFinite, "embeddings", "must not contain NaN or infinite values")
			}
		}
	}
	return dim, nil
}

func dimMismatch(want, got int) *Error {
	return &Error{Class: ErrDimensionMismatch, Rule: RuleDimension, Field: "embeddings", Want: itoa(want), Value: itoa(got),
		Reason: fmt.Sprintf("the collection's dimension is %d, got %d", want, got)}
}

func modelMismatch(ci *collInfo, model string) *Error {
	e := &Error{Class: ErrEmbedderMismatch, Rule: RuleModel, Field: "embeddings", Want: ci.Model, Value: model}
	switch {
	case ci.Model == "":
		e.Reason = fmt.Sprintf("collection %s holds vectors without an embedding model; got vectors from model %q", ci.Name, model)
	case model == "":
		e.Reason = fmt.Sprintf("collection %s holds vectors from embedding model %q; got vectors with no model", ci.Name, ci.Model)
	default:
		e.Reason = fmt.Sprintf("collection %s holds vectors from embedding model %q; got vectors from model %q", ci.Name, ci.Model, model)
	}
	return e
}

// splitReserved removes Chroma's reserved "chroma:" keys from user metadata;
// "chroma:document" (a string) sets the document, as in Chroma.
func splitReserved(md Metadata) (Metadata, *string) {
	var doc *string
	for k, v := range md {
		if strings.HasPrefix(k, reservedPrefix) {
			if k == "chroma:document" && v.Kind == where.KindString {
				s := v.Str
				doc = &s
			}
			if md != nil {
				md = md.Clone()
				delete(md, k)
			}
		}
	}
	return md, doc
}

func cloneStr(p *string) *string {
	if p == nil {
		return nil
	}
	s := *p
	return &s
}

type writeKind int

const (
	kindAdd writeKind = iota
	kindUpsert
	kindUpdate
)

// Add inserts records. Ids already in the collection are silently ignored,
// and within one batch the first occurrence of an id wins (Chroma 1.0.0).
func (s *Store) Add(ctx context.Context, collID string, req AddRequest) error {
	if req.Embeddings == nil {
		return unprocessableErr(RuleMissing, "embeddings", "required")
	}
	return s.write(ctx, collID, kindAdd, UpdateRequest(req))
}

// Upsert inserts new ids and replaces existing ones: the embedding is
// replaced, metadata merged key by key (Null deletes a key), document and uri
// replaced when given. Records keep their position in insertion order.
func (s *Store) Upsert(ctx context.Context, collID string, req AddRequest) error {
	if req.Embeddings == nil {
		return unprocessableErr(RuleMissing, "embeddings", "required")
	}
	return s.write(ctx, collID, kindUpsert, UpdateRequest(req))
}

// Update changes existing records (unknown ids ignored) with Upsert's merge
// rules; nil entries keep the old value.
func (s *Store) Update(ctx context.Context, collID string, req UpdateRequest) error {
	return s.write(ctx, collID, kindUpdate, req)
}

// write is Add, Upsert and Update: it checks the batch, stages the new
// record states, persists them with one change-log entry, and applies them to
// memory once the transaction commits.
func (s *Store) write(ctx context.Context, collID string, kind writeKind, req UpdateRequest) error {
	cid, err := ParseCollectionID(collID)
	if err != nil {
		return err
	}
	dim, refusal, err := checkWrite(kind, req)
	if err != nil {
		return err
	}
	if refusal != nil && dim == 0 {
		return refusal // no dimension to check or fix
	}
	var snapshotDue bool
	err = s.writeOp(ctx, func(tx *bolt.Tx) (func(), error) {
		if s.mu.infos[cid] == nil {
			return nil, collNotFoundByID(cid)
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

// checkWrite checks a batch before the collection is read. It returns the
// embeddings' dimension (0 when there are none) and, apart from err, a
// refusal that still lets that dimension be checked or fixed first.
//
// Chroma 1.0.0's order: deserialization (422) first, then the embeddings
// themselves, then the collection's dimension (a mismatch wins over
// everything below; an unset dimension is fixed from the first embedding
// even when the batch is then refused), then the lengths, then empty ids
// (verified against the server, see cmd/cairn/chromaapi/testdata/chroma_ops.jsonl).
func checkWrite(kind writeKind, req UpdateRequest) (dim int, refusal, err error) {
	if kind == kindAdd {
		for _, md := range req.Metadatas {
			for k, v := range md {
				if v.IsNull() {
					e := unprocessableErr(RuleNullMetadata, "metadatas", "%s: values must not be null in add", k)
					e.Key = k
					return 0, nil, e
				}
			}
		}
	}
	if kind != kindUpdate {
		for _, e := range req.Embeddings {
			if e == nil {
				return 0, nil, unprocessableErr(RuleNullVector, "embeddings", "must not hold null entries")
			}
		}
	}
	dim, err = checkEmbeddings(req.Embeddings)
	if err != nil {
		return 0, nil, err
	}
	refusal = checkLengths(len(req.IDs), len(req.Embeddings), req.Embeddings != nil, req.Documents, req.URIs, req.Metadatas)
	if refusal == nil && slices.Contains(req.IDs, "") {
		refusal = invalidErr(RuleEmptyID, "ids", "an id must have at least one character")
	}
	if refusal == nil {
		for _, id := range req.IDs {
			if len(id) > MaxIDBytes {
				refusal = invalidErr(RuleIDLong, "ids", "an id must have at most %d bytes, got %d", MaxIDBytes, len(id)).withValue(strconv.Itoa(len(id)))
				break
			}
		}
	}
	return dim, refusal, nil
}

// MaxIDBytes bounds a record id: it is a key of the embedded store, whose
// keys are at most 32 KiB with the collection's prefix; 4 KiB leaves room
// and is more than any id scheme needs.
const MaxIDBytes = 4096

// adoptVectors checks embeddings of dimension dim from model against the
// collection, and records model on a collection that has never held a
// vector.
func adoptVectors(info *collInfo, mc *memColl, dim int, model string) error {
	if dim == 0 {
		return nil
	}
	if info.Dimension != 0 && info.Dimension != dim {
		return dimMismatch(info.Dimension, dim)
	}
	if model != info.Model {
		if !(info.Model == "" && info.Dimension == 0 && len(mc.byID) == 0) {
			return modelMismatch(info, model)
		}
		info.Model = model
	}
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
func stageWriteLocked(mc *memColl, info *collInfo, kind writeKind, req UpdateRequest, seq uint64) *writeStage {
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
		var md Metadata
		if req.Metadatas != nil {
			md = req.Metadatas[i]
		}
		md, reservedDoc := splitReserved(md)
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
		case old == nil && kind == kindUpdate:
			continue
		case old != nil && kind == kindAdd:
			continue
		case old == nil:
			r = &record{id: id, dense: alloc(), order: info.NextOrder, vseq: seq, doc: doc, uri: uri}
			info.NextOrder++
			r.meta = mergeMeta(nil, md)
		default:
			nr := *old
			r = &nr
			if doc != nil {
				r.doc = doc
			}
			if uri != nil {
				r.uri = uri
			}
			r.meta = mergeMeta(old.meta, md)
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
	if ci.Config.HNSW.VectorCode != CodeSQ8R || len(st.vecs) == 0 {
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

// mergeMeta applies md (Null deletes) on top of old; the result is nil when empty.
func mergeMeta(old, md Metadata) Metadata {
	out := old.Clone()
	for k, v := range md {
		if v.IsNull() {
			delete(out, k)
			continue
		}
		if out == nil {
			out = make(Metadata, len(md))
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Delete deletes the records matching req. With nothing set it deletes
// nothing; with an empty IDs list and no filter it is an error (Chroma).
func (s *Store) Delete(ctx context.Context, collID string, req DeleteRequest) error {
	cid, err := ParseCollectionID(collID)
	if err != nil {
		return err
	}
	if err := CheckDelete(req); err != nil {
		return err
	}
	scan, err := s.scanDocuments(ctx, cid, req.IDs, req.Where, req.WhereDocument, req.MaxScanBytes)
	if err != nil {
		return err
	}
	return s.deleteOp(ctx, func(tx *bolt.Tx) (func(), error) {
		if s.mu.infos[cid] == nil {
			return nil, collNotFoundByID(cid)
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
	cid, err := ParseCollectionID(collID)
	if err != nil {
		return 0, err
	}
	var n int
	err = s.readOp(ctx, cid, func() error {
		mc := s.mu.colls[cid]
		if mc == nil {
			return collNotFoundByID(cid)
		}
		n = len(mc.byID)
		return nil
	})
	return n, err
}

func checkIncludes(inc []Include, def []Include) ([]Include, map[Include]bool, error) {
	if inc == nil {
		inc = def
	}
	set := make(map[Include]bool)
	for _, i := range inc {
		switch i {
		case IncludeDocuments, IncludeEmbeddings, IncludeMetadatas, IncludeDistances, IncludeURIs:
			set[i] = true
		default:
			return nil, nil, unprocessableErr(RuleInclude, "include", "unknown value %q: use distances, documents, embeddings, metadatas or uris", i).withValue(string(i))
		}
	}
	return append([]Include{}, inc...), set, nil
}

// resultMeta applies Chroma's null-versus-{} rule for returned metadata.
func resultMeta(r *record) Metadata {
	if r.meta != nil {
		return r.meta.Clone()
	}
	if r.uri != nil {
		return Metadata{}
	}
	return nil
}

// Get returns records in insertion order after filtering, offset and limit.
func (s *Store) Get(ctx context.Context, collID string, req GetRequest) (*GetResult, error) {
	cid, err := ParseCollectionID(collID)
	if err != nil {
		return nil, err
	}
	inc, incSet, err := checkIncludes(req.Include, []Include{IncludeDocuments, IncludeMetadatas})
	if err != nil {
		return nil, err
	}
	if (req.Limit != nil && *req.Limit < 0) || req.Offset < 0 {
		return nil, unprocessableErr(RuleNegative, "limit, offset", "must not be negative")
	}
	if err := req.Where.Validate(); err != nil {
		return nil, filterErr("where", err)
	}
	if err := req.WhereDocument.Validate(); err != nil {
		return nil, filterErr("where_document", err)
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
	var res *GetResult
	err = s.readOp(ctx, cid, func() error {
		mc := s.mu.colls[cid]
		if mc == nil {
			return collNotFoundByID(cid)
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
		budget := NewAnswerBudget(req.MaxAnswerBytes)
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
		res = newGetResult(inc, incSet, len(sel))
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
func getByOrder(mc *memColl, set *roaring.Bitmap, req GetRequest, inc []Include, incSet map[Include]bool) *GetResult {
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
	res := newGetResult(inc, incSet, len(sel))
	budget := NewAnswerBudget(req.MaxAnswerBytes)
	for _, r := range sel {
		if mc.appendRecordLocked(res, r); budget.Spend(res) {
			break
		}
	}
	return res
}

// newGetResult makes an empty result with room for n records and a list for
// each included field.
func newGetResult(inc []Include, incSet map[Include]bool, n int) *GetResult {
	res := &GetResult{IDs: make([]string, 0, n), Include: inc}
	if incSet[IncludeEmbeddings] {
		res.Embeddings = make([][]float32, 0, n)
	}
	if incSet[IncludeDocuments] {
		res.Documents = make([]*string, 0, n)
	}
	if incSet[IncludeURIs] {
		res.URIs = make([]*string, 0, n)
	}
	if incSet[IncludeMetadatas] {
		res.Metadatas = make([]Metadata, 0, n)
	}
	return res
}

// appendRecordLocked adds r to the included fields of res.
//
// REQUIRES: Store.mu held shared.
func (mc *memColl) appendRecordLocked(res *GetResult, r *record) {
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
		res.Metadatas = append(res.Metadatas, resultMeta(r))
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
	if mc.info.Config.HNSW.Space == SpaceCosine && v != nil {
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
func (s *Store) Peek(ctx context.Context, collID string, limit int) (*GetResult, error) {
	if limit == 0 {
		limit = 10
	}
	return s.Get(ctx, collID, GetRequest{Limit: &limit})
}

// Query returns, for each query embedding, the NResults nearest records among
// those matching the filters, by ascending distance. Filters are evaluated
// first (metadata index, then documents); the planner then scans the allowed
// set exactly when it is small, and runs filtered HNSW otherwise.
func (s *Store) Query(ctx context.Context, collID string, req QueryRequest) (*QueryResult, error) {
	cid, err := ParseCollectionID(collID)
	if err != nil {
		return nil, err
	}
	qa, err := checkQuery(req)
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
	res := newQueryResult(qa.include, qa.incSet, len(req.Embeddings))
	err = s.readOp(ctx, cid, func() error {
		mc := s.mu.colls[cid]
		if mc == nil {
			return collNotFoundByID(cid)
		}
		if err := checkQueryVectors(mc.info, req, qa.dim); err != nil {
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
				return refuse(ErrInternal, RuleUnknownID, "ids", "an id of the ids filter is not in the collection")
			}
		}
		budget := NewAnswerBudget(req.MaxAnswerBytes)
		for _, q := range req.Embeddings {
			if err := ctx.Err(); err != nil {
				return err
			}
			hits, err := s.search(mc, q, qa.k, allowed, req.WhereDocument != nil)
			if err != nil {
				return err
			}
			if over, err := res.appendHitsLocked(mc, hits, qa.incSet, budget); err != nil || over {
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

// DefaultNResults is a query's n_results when the request sets none
// (Chroma's default).
const DefaultNResults = 10

// queryArgs are a query's checked arguments.
type queryArgs struct {
	include []Include
	incSet  map[Include]bool
	k       int // results per query embedding
	dim     int // the embeddings' dimension, -1 when there are none
}

// checkQuery validates what a query can be judged on without the
// collection, in Chroma's order: embeddings present, include, n_results,
// filters, then one dimension for all embeddings.
func checkQuery(req QueryRequest) (queryArgs, error) {
	if req.Embeddings == nil {
		return queryArgs{}, unprocessableErr(RuleMissing, "query_embeddings", "required")
	}
	inc, incSet, err := checkIncludes(req.Include, []Include{IncludeDocuments, IncludeMetadatas, IncludeDistances})
	if err != nil {
		return queryArgs{}, err
	}
	k := DefaultNResults
	if req.NResults != nil {
		k = *req.NResults
	}
	if k < 0 {
		return queryArgs{}, unprocessableErr(RuleNResults, "n_results", "must not be negative, got %d", k).withValue(itoa(k))
	}
	if err := req.Where.Validate(); err != nil {
		return queryArgs{}, filterErr("where", err)
	}
	if err := req.WhereDocument.Validate(); err != nil {
		return queryArgs{}, filterErr("where_document", err)
	}
	dim := -1
	for _, e := range req.Embeddings {
		if dim == -1 {
			dim = len(e)
		} else if len(e) != dim {
			return queryArgs{}, invalidErr(RuleMixedDims, "query_embeddings", "all embeddings must have the same dimension")
		}
	}
	return queryArgs{include: inc, incSet: incSet, k: k, dim: dim}, nil
}

// checkQueryVectors checks the query embeddings against the collection:
// dimension, model, then finite values.
func checkQueryVectors(ci *collInfo, req QueryRequest, dim int) error {
	if ci.Dimension != 0 && dim >= 0 && dim != ci.Dimension {
		return dimMismatch(ci.Dimension, dim)
	}
	if ci.Dimension != 0 && len(req.Embeddings) > 0 && req.Model != ci.Model {
		return modelMismatch(ci, req.Model)
	}
	for _, e := range req.Embeddings {
		for _, f := range e {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return invalidErr(RuleNonFinite, "query_embeddings", "must not contain NaN or infinite values")
			}
		}
	}
	return nil
}

// newQueryResult makes an empty result for nq queries with a list for each
// included field.
func newQueryResult(inc []Include, incSet map[Include]bool, nq int) *QueryResult {
	res := &QueryResult{IDs: make([][]string, 0, nq), Include: inc}
	if incSet[IncludeEmbeddings] {
		res.Embeddings = make([][][]float32, 0, nq)
	}
	if incSet[IncludeDocuments] {
		res.Documents = make([][]*string, 0, nq)
	}
	if incSet[IncludeURIs] {
		res.URIs = make([][]*string, 0, nq)
	}
	if incSet[IncludeMetadatas] {
		res.Metadatas = make([][]Metadata, 0, nq)
	}
	if incSet[IncludeDistances] {
		res.Distances = make([][]float32, 0, nq)
	}
	return res
}

// appendHitsLocked adds one query's hits to res as its next row; over
// reports that budget is spent (the row is cut short there).
//
// REQUIRES: Store.mu held shared.
func (res *QueryResult) appendHitsLocked(mc *memColl, hits []index.Result, incSet map[Include]bool, budget *AnswerBudget) (over bool, err error) {
	row := newGetResult(nil, incSet, len(hits))
	var dists []float32
	if res.Distances != nil {
		dists = make([]float32, 0, len(hits))
	}
	for _, h := range hits {
		r := mc.byDense[h.ID]
		if r == nil {
			return false, fmt.Errorf("vecstore: index returned id %d with no record: %w", h.ID, ErrCorrupt)
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
func (s *Store) beam(cfg HNSWConfig, k int) int {
	f := s.opts.BeamFactor
	if cfg.VectorCode == CodeSQ8 || cfg.VectorCode == CodeSQ8R {
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
