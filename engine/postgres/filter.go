package postgres

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/fts"
)

// The parts of a Selection that are not in the vector metadata, UnreadBy
// (read cursors) and ValidAt (breadcrumb marks), are served after the
// SQL: of what the where part retrieves, List, Keyword, Nearest and
// Replies keep the messages those lookups pass, asking for four times as
// many at a time (up to engine.MaxLimit) until they have enough or the
// store has no more, as the embedded store's vector side does.

// List implements engine.Store.
func (s *Store) List(ctx context.Context, sel engine.Selection, limit int, order engine.ListOrder) ([]engine.Message, error) {
	if !postFiltered(sel) {
		return s.listWhere(ctx, sel, limit, order)
	}
	return keepDeepening(ctx, s, sel, limit, func(k int) ([]engine.Message, error) { return s.listWhere(ctx, sel, k, order) },
		func(m engine.Message) int64 { return m.ID })
}

// Keyword implements engine.Store.
func (s *Store) Keyword(ctx context.Context, q fts.Query, sel engine.Selection, depth int) (engine.KeywordHits, error) {
	if !postFiltered(sel) {
		return s.keywordWhere(ctx, q, sel, depth)
	}
	var out engine.KeywordHits
	hits, err := keepDeepening(ctx, s, sel, depth, func(k int) ([]engine.ScoredID, error) {
		kh, err := s.keywordWhere(ctx, q, sel, k)
		out = kh
		return kh.Hits, err
	}, func(h engine.ScoredID) int64 { return h.ID })
	out.Hits = hits
	return out, err
}

// Nearest implements engine.Store.
func (s *Store) Nearest(ctx context.Context, set engine.VectorSet, q []float32, sel engine.Selection, k int) ([]engine.ScoredID, error) {
	if !postFiltered(sel) {
		return s.nearestWhere(ctx, set, q, sel, k)
	}
	return keepDeepening(ctx, s, sel, k, func(k int) ([]engine.ScoredID, error) { return s.nearestWhere(ctx, set, q, sel, k) },
		func(h engine.ScoredID) int64 { return h.ID })
}

// Replies implements engine.Store: it keeps the replies that pass the
// lookups.
func (s *Store) Replies(ctx context.Context, askers []int64, within time.Duration, sel engine.Selection) ([]engine.Reply, error) {
	rs, err := s.repliesWhere(ctx, askers, within, sel)
	if err != nil || len(rs) == 0 || !postFiltered(sel) {
		return rs, err
	}
	ids := make([]int64, len(rs))
	for i, r := range rs {
		ids[i] = r.Reply
	}
	pass, err := s.passing(ctx, sel, ids)
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

// postFiltered reports whether sel holds a part served after the SQL.
func postFiltered(sel engine.Selection) bool { return sel.UnreadBy != "" || sel.ValidAt != nil }

// passing returns which of ids pass sel's UnreadBy and ValidAt.
func (s *Store) passing(ctx context.Context, sel engine.Selection, ids []int64) (map[int64]bool, error) {
	return engine.PassingMarks(ids, sel,
		func(agent string) (map[int64]bool, error) { return s.UnreadAmong(ctx, agent, ids) },
		func(heads *engine.RepoHeads) (map[int64]bool, error) {
			rows, err := s.Marks(ctx, ids)
			return engine.ValidMarks(rows, heads), err
		})
}

// keepDeepening fetches up to n, then 4n, ... items (up to
// engine.MaxLimit) and returns the first n of them that pass sel, in
// fetch order.
func keepDeepening[T any](ctx context.Context, s *Store, sel engine.Selection, n int, fetch func(int) ([]T, error), id func(T) int64) ([]T, error) {
	for k := n; ; k = min(engine.MaxLimit, 4*k) {
		got, err := fetch(k)
		if err != nil {
			return nil, err
		}
		ids := make([]int64, len(got))
		for i, g := range got {
			ids[i] = id(g)
		}
		pass, err := s.passing(ctx, sel, ids)
		if err != nil {
			return nil, err
		}
		kept := make([]T, 0, min(n, len(got)))
		for _, g := range got {
			if pass[id(g)] && len(kept) < n {
				kept = append(kept, g)
			}
		}
		if len(kept) >= n || len(got) < k || k >= engine.MaxLimit {
			return kept, nil
		}
	}
}
