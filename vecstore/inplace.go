package vecstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cairn-dev/cairn/index"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
	bolt "go.etcd.io/bbolt"
)

// Reads in place (Options.OneShot).
//
// Loading a collection decodes every record, builds its metadata index and
// decodes its graph and vectors: about a second at 100,000 records, which a
// process answering one query and exiting pays in full. A one-shot Store
// instead answers a query (with a where filter or none), and a Get by
// ids, from the file as it lies in bbolt's memory map, in one read
// transaction:
//   - the graph is the raw snapshot (index.MarshalGraph, uncompressed, in
//     one value), searched by index.View, which reads only the neighbour
//     lists it visits;
//   - each visited vector is read from the vec bucket (its CRC checked),
//     SQ8 codes used as they are;
//   - the hits' records are read by id (the snapshot's ids value maps
//     dense ids to record ids);
//   - records written since the snapshot (the change log after it) are
//     compared exactly and merged, and graph hits whose record changed
//     since are dropped, so the answer reflects every committed write;
//   - a where filter is evaluated on each record's metadata as stored
//     (decodeRecordMeta), and the allowed set planned as the loaded path
//     plans it (Store.scanExactly, index.PlanFiltered): scanned exactly,
//     or walked in the graph, which returns allowed nodes only.
//
// Anything else (ids or where_document filters, a collection already
// loaded, a snapshot in an older form, an unfiltered query of a
// collection small enough to scan exactly) takes the ordinary path, which
// loads the collection.
//
// A Store with Options.LoadInBackground reads in place the same way until
// the collection, whose load its first read started, is loaded.

// encodeSnapIDs encodes the record id of each dense id ("" for a free
// one): a count, then each id's length and bytes (uvarints), sealed.
func encodeSnapIDs(byDense []*record) []byte {
	b := binary.AppendUvarint(nil, uint64(len(byDense)))
	for _, r := range byDense {
		if r == nil {
			b = appendString(b, "")
		} else {
			b = appendString(b, r.id)
		}
	}
	return sealed(b)
}

// snapIDs is a view of encodeSnapIDs' value: dense id d's record id is
// p[off[2d]:off[2d+1]].
type snapIDs struct {
	p   []byte
	off []uint32
}

func decodeSnapIDs(val []byte) (snapIDs, error) {
	p, err := unseal(val, "snapshot ids")
	if err != nil {
		return snapIDs{}, err
	}
	d := &decoder{b: p}
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		return snapIDs{}, corruptf(nil, "snapshot ids: bad count")
	}
	ids := snapIDs{p: p, off: make([]uint32, 0, 2*n)}
	for i := uint64(0); i < n && d.err == nil; i++ {
		l := d.uvarint()
		start := len(p) - len(d.b)
		d.bytes(int(min(l, uint64(len(d.b))+1)))
		ids.off = append(ids.off, uint32(start), uint32(len(p)-len(d.b)))
	}
	if d.err != nil || len(d.b) != 0 {
		return snapIDs{}, corruptf(d.err, "snapshot ids")
	}
	return ids, nil
}

// id returns dense id d's record id at the snapshot ("" when none).
func (s snapIDs) id(d uint32) string {
	if 2*int(d)+1 >= len(s.off) {
		return ""
	}
	return string(s.p[s.off[2*d]:s.off[2*d+1]])
}

// inPlaceOK says whether a read of collection cid may be answered in place:
// the store is one-shot, or loads in the background (and this starts the
// load), and the collection is not loaded.
func (s *Store) inPlaceOK(cid string) bool {
	if !s.opts.OneShot && !s.opts.LoadInBackground {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, loaded := s.mu.colls[cid]; loaded || s.mu.closed || s.mu.closing {
		return false
	}
	if s.opts.LoadInBackground {
		if _, started := s.loading.LoadOrStore(cid, true); !started {
			s.loads.Add(1) // under Store.mu, before Close's Wait (closing)
			go func() {
				defer s.loads.Done()
				// A failure shows again on the next read that loads it.
				if err := s.loadInBackground(cid); err != nil && !errors.Is(err, chroma.ErrClosed) {
					s.log.Warn("vecstore: background load failed", "collection", cid, "err", err)
				}
			}()
		}
	}
	return true
}

// loadInBackground loads collection cid holding Store.ioMu, which every
// change to memory takes, but not Store.mu, so that reads in place go on
// meanwhile; the loaded collection is published at the end.
func (s *Store) loadInBackground(cid string) error {
	s.ioMu.Lock()
	defer s.ioMu.Unlock()
	return s.view(context.Background(), func(tx *bolt.Tx) error {
		s.mu.Lock()
		err := s.syncLocked(tx, false)
		ci := s.mu.infos[cid]
		_, loaded := s.mu.colls[cid]
		closed := s.mu.closed
		s.mu.Unlock()
		if err != nil || ci == nil || loaded || closed {
			return err
		}
		mc, err := s.loadCollLocked(tx, ci)
		if err != nil {
			return err
		}
		s.mu.Lock()
		if !s.mu.closed && s.mu.colls[cid] == nil && s.mu.infos[cid] == ci {
			s.mu.colls[cid] = mc
		}
		s.mu.Unlock()
		s.views.Delete(cid) // read in memory from now on
		return nil
	})
}

// errNotInPlace says a read cannot be answered in place; the caller takes
// the ordinary path.
var errNotInPlace = errors.New("vecstore: not answerable in place")

// queryInPlace answers an unfiltered query in place (see above), or
// returns errNotInPlace.
func (s *Store) queryInPlace(ctx context.Context, cid string, req chroma.QueryRequest, qa chroma.QueryArgs) (*chroma.QueryResult, error) {
	var res *chroma.QueryResult
	err := s.viewInPlace(ctx, cid, func(tx *bolt.Tx, ci *collInfo) error {
		if err := chroma.CheckQueryVectors(ci.vectorShape(), req, qa.Dim); err != nil {
			return err
		}
		c, err := s.openInPlace(tx, ci)
		if err != nil {
			return err
		}
		ef := s.beam(ci.Config.HNSW, qa.K)
		var allowed *roaring.Bitmap
		exact := false
		if req.Where != nil {
			var n int
			if allowed, n, err = c.allowed(ctx, req.Where); err != nil {
				return err
			}
			// The plan of the loaded path (Store.search, then
			// index.Search), on the same counts.
			card := int(allowed.GetCardinality())
			if exact = s.scanExactly(ci, card, n, qa.K, ef, false); !exact {
				exact, ef = index.PlanFiltered(card, n, ef, c.graph.Options().Workers)
			}
		} else if c.graph.Len()+len(c.fresh) <= s.opts.ExactMax {
			return errNotInPlace // scanned exactly on the ordinary path
		}
		res = chroma.NewQueryResult(qa.Include, qa.Included, len(req.Embeddings))
		budget := chroma.NewAnswerBudget(req.MaxAnswerBytes)
		over := false
		for _, q := range req.Embeddings {
			if err := ctx.Err(); err != nil {
				return err
			}
			if over {
				break
			}
			hits, err := c.search(q, qa.K, ef, allowed, exact, budget.Left())
			if err != nil {
				return err
			}
			row := chroma.NewGetResult(nil, qa.Included, len(hits))
			dists := make([]float32, 0, len(hits))
			for _, h := range hits {
				if err := c.appendRecord(row, h.r); err != nil {
					return err
				}
				dists = append(dists, h.d)
				if over = budget.Spend(row); over {
					break
				}
			}
			res.AppendRow(row, dists)
		}
		s.stats.inPlace.Add(1)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// viewInPlace runs fn in a read transaction with collection cid's info
// as committed; a collection that is not there is errNotInPlace (the
// ordinary path words the refusal).
func (s *Store) viewInPlace(ctx context.Context, cid string, fn func(tx *bolt.Tx, ci *collInfo) error) error {
	return s.view(ctx, func(tx *bolt.Tx) error {
		if err := checkFormat(tx); err != nil {
			return err
		}
		ci, err := freshInfo(tx, cid)
		if err != nil {
			return errNotInPlace
		}
		return fn(tx, ci)
	})
}

// getInPlace answers a Get by ids alone in place, or returns errNotInPlace.
// Records come in insertion order, as on the ordinary path.
func (s *Store) getInPlace(ctx context.Context, cid string, req chroma.GetRequest, inc []chroma.Include, incSet map[chroma.Include]bool) (*chroma.GetResult, error) {
	var res *chroma.GetResult
	err := s.viewInPlace(ctx, cid, func(tx *bolt.Tx, ci *collInfo) error {
		cb := tx.Bucket(collBucketName(ci.ID))
		if cb == nil {
			return corruptf(nil, "collection %s: missing data bucket", ci.ID)
		}
		c := &inPlace{ci: ci, rec: cb.Bucket(subRec), vec: cb.Bucket(subVec)}
		if ci.Config.HNSW.VectorCode == chroma.CodeSQ8R && incSet[chroma.IncludeEmbeddings] {
			// An sq8r row decodes against the centroid table the
			// snapshot's graph holds.
			var err error
			if c, err = s.openRowsInPlace(tx, ci); err != nil {
				return err
			}
		}
		var recs []*record
		seen := make(map[string]bool, len(req.IDs))
		// Every record found is in the answer unless offset or limit
		// leaves some out: the budget then applies as they are decoded.
		var budget *chroma.AnswerBudget
		if req.Offset == 0 && (req.Limit == nil || *req.Limit >= len(req.IDs)) {
			budget = chroma.NewAnswerBudget(req.MaxAnswerBytes)
		}
		for _, id := range req.IDs {
			if seen[id] {
				continue
			}
			seen[id] = true
			r, err := c.record(id)
			if err != nil {
				return err
			}
			if r != nil {
				recs = append(recs, r)
				if budget.SpendRecord(r.id, r.doc, r.uri, r.meta) {
					break
				}
			}
		}
		slices.SortFunc(recs, func(a, b *record) int {
			switch {
			case a.order < b.order:
				return -1
			case a.order > b.order:
				return 1
			}
			return 0
		})
		recs = recs[min(req.Offset, len(recs)):]
		if req.Limit != nil && len(recs) > *req.Limit {
			recs = recs[:*req.Limit]
		}
		res = chroma.NewGetResult(inc, incSet, len(recs))
		budget = chroma.NewAnswerBudget(req.MaxAnswerBytes)
		for _, r := range recs {
			if err := c.appendRecord(res, r); err != nil {
				return err
			}
			if budget.Spend(res) {
				break
			}
		}
		s.stats.inPlace.Add(1)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// inPlace is one collection read where it lies, for one transaction.
type inPlace struct {
	ci    *collInfo
	rec   *bolt.Bucket
	vec   *bolt.Bucket
	graph *index.View
	snap  *bolt.Bucket // the snapshot's bucket
	ids   snapIDs
	table []float32 // sq8r: the centroid table rows are expanded against
	// scales: sq8r, the rows' t as of the snapshot (decodeRowScales),
	// nil when the snapshot has none.
	scales []byte
	// byDense: the vec bucket's values by dense id, once listed
	// (indexVectors); nil before.
	byDense [][]byte
	// fresh holds the records written since the snapshot, by id (nil:
	// deleted since); freshDense their dense ids.
	fresh      map[string]*record
	freshDense map[uint32]bool
}

// openInPlace opens collection ci's raw snapshot and reads the records
// written since it, or returns errNotInPlace when the snapshot is in an
// older form.
func (s *Store) openInPlace(tx *bolt.Tx, ci *collInfo) (*inPlace, error) {
	if !ci.SnapRaw || ci.SnapChunks != 1 || ci.SnapSeq == 0 || ci.Dimension == 0 {
		return nil, errNotInPlace
	}
	cb := tx.Bucket(collBucketName(ci.ID))
	if cb == nil {
		return nil, corruptf(nil, "collection %s: missing data bucket", ci.ID)
	}
	sb := cb.Bucket(subSnap)
	if sb == nil {
		return nil, corruptf(nil, "collection %s: graph snapshot missing", ci.ID)
	}
	c := &inPlace{ci: ci, rec: cb.Bucket(subRec), vec: cb.Bucket(subVec), snap: sb}
	// The graph's own checksum, which OpenView checks, covers the same
	// bytes as the snapshot's: one pass instead of two.
	raw := sb.Get(u32(0))
	if int64(len(raw)) != ci.SnapLen {
		return nil, corruptf(nil, "collection %s: graph snapshot length %d, want %d", ci.ID, len(raw), ci.SnapLen)
	}
	var err error
	prev, _ := s.views.Load(ci.ID)
	last, _ := prev.(*lastView)
	if last != nil {
		c.graph, err = last.graph.Reopen(raw)
	} else {
		c.graph, err = index.OpenView(raw)
	}
	if err != nil {
		return nil, corruptf(err, "collection %s: graph snapshot", ci.ID)
	}
	next := &lastView{graph: c.graph, snapSeq: ci.SnapSeq, snapLen: ci.SnapLen, snapCRC: ci.SnapCRC}
	if o := c.graph.Options(); o.Dim != ci.Dimension || o.Space != indexSpace(ci.Config.HNSW.Space) || o.Code != indexCode(ci.Config.HNSW) {
		return nil, errNotInPlace // written before a Recode: the ordinary path re-encodes it
	}
	if ci.Config.HNSW.VectorCode == chroma.CodeSQ8R {
		if (cb.Get(keyCentroids) != nil) != c.graph.Trained() {
			// Trained since the snapshot: rows written since refer to
			// centroids the snapshot lacks; the loaded path installs them.
			return nil, errNotInPlace
		}
		if val := cb.Get(keyCentroids); last != nil && last.table != nil && bytes.Equal(val, last.tableRaw) {
			c.table, next.table, next.tableRaw = last.table, last.table, last.tableRaw
		} else if c.table, err = readCentroids(cb, ci); err != nil {
			return nil, fmt.Errorf("collection %s: %w", ci.ID, err)
		} else if c.table != nil {
			next.table, next.tableRaw = c.table, bytes.Clone(val)
		}
	}
	s.views.Store(ci.ID, next)
	if ci.Config.HNSW.VectorCode == chroma.CodeSQ8R {
		if val := sb.Get(keySnapRowScales); val != nil {
			if c.scales, err = decodeRowScales(val, ci.SnapSeq); err != nil {
				return nil, fmt.Errorf("collection %s: %w", ci.ID, err)
			}
		}
	}
	idsVal := sb.Get(keySnapIDs)
	if idsVal == nil {
		return nil, corruptf(nil, "collection %s: snapshot ids missing", ci.ID)
	}
	if c.ids, err = decodeSnapIDs(idsVal); err != nil {
		return nil, fmt.Errorf("collection %s: %w", ci.ID, err)
	}
	c.fresh = map[string]*record{}
	c.freshDense = map[uint32]bool{}
	cur := cb.Bucket(subLog).Cursor()
	for k, v := cur.Seek(u64(ci.SnapSeq + 1)); k != nil; k, v = cur.Next() {
		ids, err := decodeLogEntry(v)
		if err != nil {
			return nil, fmt.Errorf("collection %s: %w", ci.ID, err)
		}
		for _, id := range ids {
			if _, done := c.fresh[id]; done {
				continue
			}
			r, err := c.record(id)
			if err != nil {
				return nil, err
			}
			c.fresh[id] = r
			if r != nil {
				c.freshDense[r.dense] = true
			}
		}
	}
	return c, nil
}

// lastView is what a collection was last read in place with: its graph
// view, whose centroid table the next view of the same snapshot reuses
// (index.View.Reopen) and a Get of it decodes rows with (View.RowDecoder),
// and, for sq8r, the stored centroid table decoded and the bytes it was
// decoded from.
type lastView struct {
	graph    *index.View
	table    []float32
	tableRaw []byte
	// The snapshot graph was opened on (collInfo's fields).
	snapSeq uint64
	snapLen int64
	snapCRC uint32
}

// openRowsInPlace returns what decoding collection ci's sq8r rows needs
// (the graph's centroids and the stored centroid table) for a Get: taken
// from the last view when it was of the same snapshot and table, without
// opening the graph again (decoding a row reads its centroids only, not
// the graph's bytes, which lay in an earlier transaction's mapping);
// otherwise the snapshot opened as openInPlace does.
func (s *Store) openRowsInPlace(tx *bolt.Tx, ci *collInfo) (*inPlace, error) {
	prev, _ := s.views.Load(ci.ID)
	last, _ := prev.(*lastView)
	if last == nil || !ci.SnapRaw || last.snapSeq != ci.SnapSeq || last.snapLen != ci.SnapLen || last.snapCRC != ci.SnapCRC {
		return s.openInPlace(tx, ci)
	}
	cb := tx.Bucket(collBucketName(ci.ID))
	if cb == nil {
		return nil, corruptf(nil, "collection %s: missing data bucket", ci.ID)
	}
	val := cb.Get(keyCentroids)
	if (val != nil) != last.graph.Trained() || (val != nil && (last.table == nil || !bytes.Equal(val, last.tableRaw))) {
		return s.openInPlace(tx, ci)
	}
	// The last view may be searching in another goroutine (a search's
	// vector side beside its keyword side's similarities): the Get decodes
	// with a decoder of its own over the same centroid table.
	return &inPlace{ci: ci, rec: cb.Bucket(subRec), vec: cb.Bucket(subVec), graph: last.graph.RowDecoder(), table: last.table}, nil
}

// record reads record id, nil when absent.
func (c *inPlace) record(id string) (*record, error) {
	val := c.rec.Get([]byte(id))
	if val == nil {
		return nil, nil
	}
	r, err := decodeRecord(id, val)
	if err != nil {
		return nil, fmt.Errorf("collection %s: %w", c.ci.ID, err)
	}
	return r, nil
}

// stored returns dense id d's vector payload as stored (CRC checked; an
// sq8r row expanded, see expandRow), nil when there is none; a damaged one
// is reported through *bad.
func (c *inPlace) stored(d uint32, bad *error) []byte {
	var val []byte
	if c.byDense != nil {
		if int(d) < len(c.byDense) {
			val = c.byDense[d]
		}
	} else {
		val = c.vec.Get(u32(d))
	}
	if val == nil {
		return nil
	}
	if len(val) >= 4 && crc(val[4:]) == binary.BigEndian.Uint32(val) {
		p := val[4:] // (unseal, without formatting its message per vector)
		if c.ci.Config.HNSW.VectorCode != chroma.CodeSQ8R {
			return p
		}
		if t, ok := c.rowScale(d); ok && len(p) == index.RowLen(c.ci.Dimension)-4 {
			// expandRow's result as of the snapshot, whose vector
			// this still is (not rewritten since).
			row := make([]byte, 0, len(p)+4)
			row = append(row, p[:rowT]...)
			row = binary.LittleEndian.AppendUint32(row, t)
			return append(row, p[rowT:]...)
		}
		row, err := expandRow(c.ci, c.table, p)
		if err == nil {
			return row
		}
		if *bad == nil {
			*bad = fmt.Errorf("collection %s: vector %d: %w", c.ci.ID, d, err)
		}
		return nil
	}
	_, err := unseal(val, fmt.Sprintf("vector %d", d))
	if *bad == nil {
		*bad = fmt.Errorf("collection %s: %w", c.ci.ID, err)
	}
	return nil
}

// inPlaceHit is a record and its distance to the query.
type inPlaceHit struct {
	r *record
	d float32
}

// allowed returns the dense ids of the records whose metadata pass w
// (matchWhere, the metadata index's reference semantics) and the number
// of records: from the snapshot's metadata postings when they answer w,
// else decoding of each record only the keys w names.
func (c *inPlace) allowed(ctx context.Context, w *where.Expr) (*roaring.Bitmap, int, error) {
	keys := whereKeys(w)
	if out, n, ok, err := c.allowedByPostings(w, keys); ok || err != nil {
		return out, n, err
	}
	md := make(chroma.Metadata, len(keys))
	out := roaring.New()
	n := 0
	cur := c.rec.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		if n%cancelEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		d, err := decodeRecordMeta(k, v, keys, md)
		if err != nil {
			return nil, 0, fmt.Errorf("collection %s: %w", c.ci.ID, err)
		}
		n++
		if matchWhere(w, md) {
			out.Add(d)
		}
	}
	return out, n, nil
}

// search returns the k nearest records to q (among allowed, when not
// nil): with exact, every allowed record compared exactly; otherwise the
// graph's ef best whose records have not changed since the snapshot,
// merged with the records written since, compared exactly.
//
// left, when not negative, is what the answer may still take
// (chroma.AnswerBudget.Left): once the records decoded for the hits take
// more, search returns those hits as they are (the answer will be over
// its budget and refused), without decoding the rest.
func (c *inPlace) search(q []float32, k, ef int, allowed *roaring.Bitmap, exact bool, left int64) ([]inPlaceHit, error) {
	if k == 0 || (allowed != nil && allowed.IsEmpty()) {
		return nil, nil
	}
	pq, err := c.graph.Prepare(q)
	if err != nil {
		return nil, &chroma.Error{Class: chroma.ErrInvalid, Rule: chroma.RuleNonFinite, Field: "query_embeddings", Reason: err.Error()}
	}
	if exact && allowed != nil {
		return c.scan(pq, k, allowed, left)
	}
	var allow index.Allow
	if allowed != nil {
		allow = allowed
	}
	if allowed != nil && c.byDense == nil {
		// A filtered walk reads tens of thousands of vectors at random:
		// one pass of a cursor over the vec bucket (keys in dense order)
		// costs a few of bbolt's lookups by key per vector.
		if err := c.indexVectors(); err != nil {
			return nil, err
		}
	}
	var bad error
	res, err := c.graph.Search(pq, ef, allow, func(d uint32) []byte { return c.stored(d, &bad) })
	if bad != nil {
		return nil, bad
	}
	if err != nil {
		return nil, corruptf(err, "collection %s: graph search", c.ci.ID)
	}
	hits := make([]inPlaceHit, 0, k+len(c.fresh))
	for _, h := range res {
		if len(hits) == k {
			break
		}
		if c.freshDense[h.ID] {
			continue
		}
		id := c.ids.id(h.ID)
		if _, changed := c.fresh[id]; changed || id == "" {
			continue
		}
		r, err := c.record(id)
		if err != nil {
			return nil, err
		}
		if r == nil || r.dense != h.ID {
			continue // not the snapshot's record (Check reports such damage)
		}
		hits = append(hits, inPlaceHit{r: r, d: h.Distance})
		if left >= 0 {
			if left -= r.answerBytes(); left < 0 {
				return hits, nil
			}
		}
	}
	for _, r := range c.fresh {
		if r == nil || (allowed != nil && !allowed.Contains(r.dense)) {
			continue
		}
		d, err := c.distance(pq, r.dense)
		if err != nil {
			return nil, err
		}
		hits = append(hits, inPlaceHit{r: r, d: d})
	}
	sortHits(hits)
	return hits[:min(k, len(hits))], nil
}

// indexVectors lists the vec bucket's values by dense id (c.byDense), as
// they lie in the mapped file.
func (c *inPlace) indexVectors() error {
	byDense := make([][]byte, c.graph.Slots())
	cur := c.vec.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		if len(k) != 4 {
			return corruptf(nil, "collection %s: vector key of %d bytes", c.ci.ID, len(k))
		}
		d := binary.BigEndian.Uint32(k)
		if int(d) >= len(byDense) {
			byDense = slices.Grow(byDense, int(d)+1-len(byDense))[:d+1]
		}
		byDense[d] = v
	}
	c.byDense = byDense
	return nil
}

// distance returns the distance from pq to dense id d's stored vector.
func (c *inPlace) distance(pq index.Query, d uint32) (float32, error) {
	var bad error
	p := c.stored(d, &bad)
	if bad != nil {
		return 0, bad
	}
	if p == nil {
		return 0, corruptf(nil, "collection %s: vector %d missing", c.ci.ID, d)
	}
	dist, ok := c.graph.Distance(pq, p)
	if !ok {
		return 0, corruptf(nil, "collection %s: vector %d malformed", c.ci.ID, d)
	}
	return dist, nil
}

// scan returns the k allowed records nearest to pq, comparing each; left
// is search's.
func (c *inPlace) scan(pq index.Query, k int, allowed *roaring.Bitmap, left int64) ([]inPlaceHit, error) {
	type near struct {
		d    uint32
		dist float32
	}
	all := make([]near, 0, allowed.GetCardinality())
	it := allowed.Iterator()
	for it.HasNext() {
		d := it.Next()
		dist, err := c.distance(pq, d)
		if err != nil {
			return nil, err
		}
		all = append(all, near{d, dist})
	}
	slices.SortFunc(all, func(a, b near) int { return nearer(a.dist, b.dist, a.d, b.d) })
	hits := make([]inPlaceHit, 0, min(k, len(all)))
	for _, h := range all[:min(k, len(all))] {
		r, err := c.recordAt(h.d)
		if err != nil {
			return nil, err
		}
		hits = append(hits, inPlaceHit{r: r, d: h.dist})
		if left >= 0 {
			if left -= r.answerBytes(); left < 0 {
				break
			}
		}
	}
	return hits, nil
}

// answerBytes is what an answer budget counts of r, its embedding aside
// (chroma.RecordBytes).
func (r *record) answerBytes() int64 { return chroma.RecordBytes(r.id, r.doc, r.uri, r.meta) }

// recordAt returns the record at dense id d (one the records hold).
func (c *inPlace) recordAt(d uint32) (*record, error) {
	if c.freshDense[d] {
		for _, r := range c.fresh {
			if r != nil && r.dense == d {
				return r, nil
			}
		}
	}
	r, err := c.record(c.ids.id(d))
	if err != nil {
		return nil, err
	}
	if r == nil || r.dense != d {
		return nil, corruptf(nil, "collection %s: snapshot ids do not name the record at %d", c.ci.ID, d)
	}
	return r, nil
}

// sortHits orders hits by distance, then dense id.
func sortHits(hits []inPlaceHit) {
	slices.SortStableFunc(hits, func(a, b inPlaceHit) int { return nearer(a.d, b.d, a.r.dense, b.r.dense) })
}

// nearer orders by distance (da, db), then dense id (a, b).
func nearer(da, db float32, a, b uint32) int {
	switch {
	case da < db:
		return -1
	case da > db:
		return 1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// appendRecord adds r to the included fields of res, its embedding read
// from the vec bucket (scaled back by its norm in the cosine space, as
// memColl.vector does).
func (c *inPlace) appendRecord(res *chroma.GetResult, r *record) error {
	res.IDs = append(res.IDs, r.id)
	if res.Embeddings != nil {
		val := c.vec.Get(u32(r.dense))
		if val == nil {
			return corruptf(nil, "collection %s: record %q: vector %d missing", c.ci.ID, r.id, r.dense)
		}
		var v []float32
		var err error
		if c.ci.Config.HNSW.VectorCode == chroma.CodeSQ8R {
			var bad error
			if p := c.stored(r.dense, &bad); bad != nil {
				return bad
			} else if dv, ok := c.graph.DecodeRow(p); ok {
				v = dv
			} else {
				err = corruptf(nil, "vector %d: malformed sq8r row", r.dense)
			}
		} else {
			v, err = decodeStored(c.ci, val, fmt.Sprintf("vector %d", r.dense))
		}
		if err != nil {
			return fmt.Errorf("collection %s: %w", c.ci.ID, err)
		}
		if c.ci.Config.HNSW.VectorCode != "" && c.ci.Config.HNSW.Space == chroma.SpaceCosine && r.norm > 0 {
			for i := range v {
				v[i] *= r.norm
			}
		}
		res.Embeddings = append(res.Embeddings, v)
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
	return nil
}
