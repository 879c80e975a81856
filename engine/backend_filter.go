package engine

import (
	"context"

	"github.com/cairn-dev/cairn/vecstore/where"
)

// searchBackend is the Backend a search retrieves from: e's, or, when the
// filter holds what the where expression cannot (unread_by,
// breadcrumbs_valid), e's wrapped so that retrieval keeps only the
// messages passing it.
func (e *Engine) searchBackend(p searchPlan) (Backend, error) {
	f := p.filter
	if f.unreadBy == "" && f.validAt == "" {
		return e.bs.be, nil
	}
	var lookups []func(context.Context, []int64) (map[int64]bool, error)
	if f.unreadBy != "" {
		cs, err := backendOp[CursorStore](e)
		if err != nil {
			return nil, err
		}
		lookups = append(lookups, func(ctx context.Context, ids []int64) (map[int64]bool, error) {
			return cs.UnreadAmong(ctx, f.unreadBy, ids)
		})
	}
	if f.validAt != "" {
		ms, err := backendOp[MarkStore](e)
		if err != nil {
			return nil, err
		}
		lookups = append(lookups, func(ctx context.Context, ids []int64) (map[int64]bool, error) {
			rows, err := ms.Marks(ctx, ids)
			valid := make(map[int64]bool, len(rows))
			for id, r := range rows {
				if r.Head == f.validAt && r.Worst == 0 {
					valid[id] = true
				}
			}
			return valid, err
		})
	}
	return filteredBackend{Backend: e.bs.be, lookups: lookups}, nil
}

// filteredBackend keeps, of what its Backend retrieves, the messages every
// lookup passes. As the embedded store's vector side does for these
// filters, it asks for four times as many at a time (up to MaxLimit)
// until it has enough or the Backend has no more.
type filteredBackend struct {
	Backend
	lookups []func(context.Context, []int64) (map[int64]bool, error)
}

func (f filteredBackend) Keyword(ctx context.Context, terms []string, w *where.Expr, depth int) ([]ScoredID, error) {
	return keepDeepening(ctx, f, depth, func(k int) ([]ScoredID, error) { return f.Backend.Keyword(ctx, terms, w, k) },
		func(h ScoredID) int64 { return h.ID })
}

func (f filteredBackend) Nearest(ctx context.Context, set int64, q []float32, w *where.Expr, k int) ([]ScoredID, error) {
	return keepDeepening(ctx, f, k, func(k int) ([]ScoredID, error) { return f.Backend.Nearest(ctx, set, q, w, k) },
		func(h ScoredID) int64 { return h.ID })
}

func (f filteredBackend) List(ctx context.Context, w *where.Expr, limit int, order ListOrder) ([]Message, error) {
	return keepDeepening(ctx, f, limit, func(k int) ([]Message, error) { return f.Backend.List(ctx, w, k, order) },
		func(m Message) int64 { return m.ID })
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
