package vecstore

import (
	"context"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/cairn-dev/cairn/vecstore/where"
)

// cancelEvery is how many records a long loop handles between checks of
// its context, so that a request whose client has gone stops burning CPU.
// Document filters check theirs before every clause instead (DocMatcher):
// one record may cost hundreds of clauses over a long document.
const cancelEvery = 1024

// DefaultMaxScanBytes bounds the work of one request's where_document
// filter when the request sets no MaxScanBytes: 256 MiB of document bytes
// scanned, each clause evaluated counting its document's length. A
// two-clause filter over 100,000 documents of 1 KB fits, and costs well
// under a second with $contains; Go's regular expressions scan a few MB
// to a few hundred MB a second, so the slowest filter within the bound
// still ends within about a minute of CPU (write_timeout is 5 minutes).
const DefaultMaxScanBytes = 256 << 20

// DocMatcher evaluates one request's where_document filter record by
// record, within the request's budget of work, checking its context
// before every clause so that the work stops promptly once the client has
// gone. Not safe for concurrent use.
type DocMatcher struct {
	ctx     context.Context
	d       *where.DocExpr
	limit   int64
	scanned int64
	err     error
}

// NewDocMatcher returns a matcher of d (validated) that may scan limit
// bytes of documents in all (0: DefaultMaxScanBytes).
func NewDocMatcher(ctx context.Context, d *where.DocExpr, limit int64) *DocMatcher {
	if limit <= 0 {
		limit = DefaultMaxScanBytes
	}
	return &DocMatcher{ctx: ctx, d: d, limit: limit}
}

// Match reports whether doc (nil: no document) matches the filter. Once
// the context is done or the budget spent, it returns that error, for
// this record and every later one.
func (m *DocMatcher) Match(doc *string) (bool, error) {
	if m.err != nil {
		return false, m.err
	}
	ok := m.eval(m.d, doc)
	return ok && m.err == nil, m.err
}

// Scanned is the number of document bytes the matcher's clauses scanned.
func (m *DocMatcher) Scanned() int64 { return m.scanned }

func (m *DocMatcher) eval(d *where.DocExpr, doc *string) bool {
	switch d.Op {
	case where.DocAnd:
		for _, c := range d.Children {
			if !m.eval(c, doc) || m.err != nil {
				return false
			}
		}
		return true
	case where.DocOr:
		for _, c := range d.Children {
			if m.eval(c, doc) || m.err != nil {
				return m.err == nil
			}
		}
		return false
	}
	if doc == nil {
		return d.Op == where.DocNotContains || d.Op == where.DocNotRegex
	}
	if err := m.ctx.Err(); err != nil {
		m.err = err
		return false
	}
	m.scanned += int64(len(*doc)) + 1
	if m.scanned > m.limit {
		m.err = invalidErr(RuleScanLimit, "where_document",
			"the filter scans more than this server's limit of %d bytes of documents (max_scan_bytes: each clause evaluated counts its document's length); narrow the records with ids or where, or use fewer clauses",
			m.limit).withValue(strconv.FormatInt(m.limit, 10))
		return false
	}
	found := d.MatchLeaf(*doc)
	if d.Op == where.DocNotContains || d.Op == where.DocNotRegex {
		return !found
	}
	return found
}

// docScan is the outcome of a where_document scan made without holding the
// store's lock, so that a costly document filter (many branches, long
// documents) never keeps writers waiting: records are immutable once
// published (a write replaces them), so a record seen by the scan can be
// judged later by identity, and only records written since are judged
// again under the lock.
type docScan struct {
	match map[*record]bool
	m     *DocMatcher // the request's, shared with filterLocked
}

// scanDocuments evaluates wd over the records matching ids and w. It takes
// the store's shared lock only to list the candidates, then matches their
// documents with no lock held, checking ctx as it goes. A nil wd needs no
// scan (nil). maxScan bounds the work (DocMatcher).
func (s *Store) scanDocuments(ctx context.Context, cid string, ids []string, w *where.Expr, wd *where.DocExpr, maxScan int64) (*docScan, error) {
	if wd == nil {
		return nil, nil
	}
	var recs []*record
	err := s.readOp(ctx, cid, func() error {
		mc := s.mu.colls[cid]
		if mc == nil {
			return collNotFoundByID(cid)
		}
		mc.prepareReads()
		set, _ := mc.candidatesLocked(ids, w)
		recs = make([]*record, 0, set.GetCardinality())
		it := set.Iterator()
		for it.HasNext() {
			recs = append(recs, mc.byDense[it.Next()])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	scan := &docScan{match: make(map[*record]bool, len(recs)), m: NewDocMatcher(ctx, wd, maxScan)}
	for _, r := range recs {
		ok, err := scan.m.Match(r.doc)
		if err != nil {
			return nil, err
		}
		scan.match[r] = ok
	}
	return scan, nil
}

// candidatesLocked returns the live dense ids matching ids AND w, and
// whether an id of ids is unknown.
// REQUIRES: Store.mu held (shared is enough) and prepareReads called.
func (mc *memColl) candidatesLocked(ids []string, w *where.Expr) (*roaring.Bitmap, bool) {
	var set *roaring.Bitmap
	unknown := false
	if ids != nil {
		set = roaring.New()
		for _, id := range ids {
			if r := mc.byID[id]; r != nil {
				set.Add(r.dense)
			} else {
				unknown = true
			}
		}
	}
	if w != nil {
		m := mc.idx.eval(w, mc.live)
		if set == nil {
			set = m
		} else {
			set.And(m)
		}
	}
	if set == nil {
		set = mc.live.Clone()
	}
	return set, unknown
}

// filterLocked returns the live dense ids matching ids AND w AND wd, and
// whether an id of ids is unknown. Documents are judged from scan (made
// by scanDocuments before the lock was taken) for the records it saw; only
// records written since are matched here, within the same budget.
// REQUIRES: Store.mu held (shared is enough) and prepareReads called.
func (mc *memColl) filterLocked(ctx context.Context, ids []string, w *where.Expr, wd *where.DocExpr, scan *docScan) (*roaring.Bitmap, bool, error) {
	set, unknown := mc.candidatesLocked(ids, w)
	if wd == nil {
		return set, unknown, nil
	}
	if scan == nil {
		scan = &docScan{}
	}
	if scan.m == nil {
		scan.m = NewDocMatcher(ctx, wd, 0)
	}
	out := roaring.New()
	it := set.Iterator()
	for it.HasNext() {
		d := it.Next()
		r := mc.byDense[d]
		m, seen := scan.match[r]
		if !seen {
			var err error
			if m, err = scan.m.Match(r.doc); err != nil {
				return nil, false, err
			}
		}
		if m {
			out.Add(d)
		}
	}
	return out, unknown, nil
}
