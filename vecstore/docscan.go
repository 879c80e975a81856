package vecstore

import (
	"context"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// cancelEvery is how many records a long loop handles between checks of
// its context, so that a request whose client has gone stops burning CPU.
// Document filters check theirs before every clause instead (DocMatcher):
// one record may cost hundreds of clauses over a long document.
const cancelEvery = 1024

// docScan is the outcome of a where_document scan made without holding the
// store's lock, so that a costly document filter (many branches, long
// documents) never keeps writers waiting: records are immutable once
// published (a write replaces them), so a record seen by the scan can be
// judged later by identity, and only records written since are judged
// again under the lock.
type docScan struct {
	match map[*record]bool
	m     *chroma.DocMatcher // the request's, shared with filterLocked
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
			return chroma.CollectionNotFoundByID(cid)
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
	scan := &docScan{match: make(map[*record]bool, len(recs)), m: chroma.NewDocMatcher(ctx, wd, maxScan)}
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
		scan.m = chroma.NewDocMatcher(ctx, wd, 0)
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
