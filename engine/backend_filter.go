package engine

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn/fts"
)

// backendCaps are be's capabilities (capsOf), completed by what the Engine
// does itself over be's optional stores: with a MarkStore it attaches
// breadcrumb checks and demotes stale messages from the marks be keeps.
func (e *Engine) backendCaps(be Store) storeCaps {
	c := capsOf(be)
	if _, ok := be.(MarkStore); ok && c.checks == nil {
		c.checks = markStoreChecks{e}
	}
	return c
}

// markStoreChecks is BreadcrumbChecks over a Store's MarkStore.
type markStoreChecks struct{ e *Engine }

func (m markStoreChecks) AttachChecks(ctx context.Context, ms []*Message) error {
	return m.e.attachChecks(ctx, ms)
}

func (m markStoreChecks) StaleAmong(ctx context.Context, heads *RepoHeads, ids []int64) (map[int64]bool, error) {
	return m.e.staleAmong(ctx, heads, ids)
}

// searchStore is the store a search retrieves from: e.store, or, when
// the filter holds what e.store does not serve itself (unread_by,
// breadcrumbs_valid without MarkFilters), e.store wrapped so that
// retrieval keeps only the messages passing it, checked through its
// CursorStore and MarkStore. Without those the filter is refused.
func (e *Engine) searchStore(f resolved) (Store, error) {
	needUnread := f.unreadBy != "" && !e.caps.unread
	needValid := f.validAt != nil && !e.caps.valid
	if !needUnread && !needValid {
		return e.store, nil
	}
	var lookups []func(context.Context, []int64) (map[int64]bool, error)
	if needUnread {
		cs, err := backendOp[CursorStore](e)
		if err != nil {
			return nil, err
		}
		lookups = append(lookups, func(ctx context.Context, ids []int64) (map[int64]bool, error) {
			return cs.UnreadAmong(ctx, f.unreadBy, ids)
		})
	}
	if needValid {
		ms, err := backendOp[MarkStore](e)
		if err != nil {
			return nil, err
		}
		lookups = append(lookups, func(ctx context.Context, ids []int64) (map[int64]bool, error) {
			rows, err := ms.Marks(ctx, ids)
			valid := make(map[int64]bool, len(rows))
			for id, r := range rows {
				if _, current, _ := f.validAt.markNow(r); current && r.Worst == 0 {
					valid[id] = true
				}
			}
			return valid, err
		})
	}
	return filteredBackend{Store: e.store, lookups: lookups}, nil
}

// filteredBackend keeps, of what its Store retrieves, the messages every
// lookup passes. As the embedded store's vector side does for these
// filters, it asks for four times as many at a time (up to MaxLimit)
// until it has enough or the Store has no more.
type filteredBackend struct {
	Store
	lookups []func(context.Context, []int64) (map[int64]bool, error)
}

func (f filteredBackend) Keyword(ctx context.Context, q fts.Query, sel Selection, depth int) (KeywordHits, error) {
	var out KeywordHits
	hits, err := keepDeepening(ctx, f, depth, func(k int) ([]ScoredID, error) {
		kh, err := f.Store.Keyword(ctx, q, sel, k)
		out = kh
		return kh.Hits, err
	}, func(h ScoredID) int64 { return h.ID })
	out.Hits = hits
	return out, err
}

func (f filteredBackend) Nearest(ctx context.Context, set VectorSet, q []float32, sel Selection, k int) ([]ScoredID, error) {
	return keepDeepening(ctx, f, k, func(k int) ([]ScoredID, error) { return f.Store.Nearest(ctx, set, q, sel, k) },
		func(h ScoredID) int64 { return h.ID })
}

func (f filteredBackend) List(ctx context.Context, sel Selection, limit int, order ListOrder) ([]Message, error) {
	return keepDeepening(ctx, f, limit, func(k int) ([]Message, error) { return f.Store.List(ctx, sel, k, order) },
		func(m Message) int64 { return m.ID })
}

// Replies keeps the replies that pass the lookups.
func (f filteredBackend) Replies(ctx context.Context, askers []int64, within time.Duration, sel Selection) ([]Reply, error) {
	rs, err := f.Store.Replies(ctx, askers, within, sel)
	if err != nil || len(rs) == 0 {
		return rs, err
	}
	ids := make([]int64, len(rs))
	for i, r := range rs {
		ids[i] = r.Reply
	}
	pass, err := f.pass(ctx, ids)
	if err != nil {
		return nil, err
	}
	kept := rs[:0]
	for _, r := range rs {
		if pass[r.Reply] {
			kept = append(kept, r)
		}
	}
	return kept, nil
}

// pass returns which of ids every lookup passes.
func (f filteredBackend) pass(ctx context.Context, ids []int64) (map[int64]bool, error) {
	pass := make(map[int64]bool, len(ids))
	for _, id := range ids {
		pass[id] = true
	}
	for _, lookup := range f.lookups {
		keep, err := lookup(ctx, ids)
		if err != nil {
			return nil, err
		}
		for id := range pass {
			if !keep[id] {
				delete(pass, id)
			}
		}
	}
	return pass, nil
}

// keepDeepening fetches up to n, then 4n, ... items (up to MaxLimit) and
// returns the first n of them that f's lookups pass, in fetch order.
func keepDeepening[T any](ctx context.Context, f filteredBackend, n int, fetch func(int) ([]T, error), id func(T) int64) ([]T, error) {
	for k := n; ; k = min(MaxLimit, 4*k) {
		got, err := fetch(k)
		if err != nil {
			return nil, err
		}
		ids := make([]int64, len(got))
		for i, g := range got {
			ids[i] = id(g)
		}
		pass, err := f.pass(ctx, ids)
		if err != nil {
			return nil, err
		}
		kept := make([]T, 0, min(n, len(got)))
		for _, g := range got {
			if pass[id(g)] && len(kept) < n {
				kept = append(kept, g)
			}
		}
		if len(kept) >= n || len(got) < k || k >= MaxLimit {
			return kept, nil
		}
	}
}
