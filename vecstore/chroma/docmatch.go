package chroma

import (
	"context"
	"strconv"

	"github.com/cairn-dev/cairn/vecstore/where"
)

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
