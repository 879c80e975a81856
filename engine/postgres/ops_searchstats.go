package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
)

// AddSearches implements engine.Store: one update of a random
// shard of search_stats.
func (s *Store) AddSearches(ctx context.Context, n, us int64) error {
	if _, err := s.pool.Exec(ctx, "UPDATE search_stats SET searches = searches + $1, total_us = total_us + $2 WHERE shard = $3",
		n, us, rand.IntN(16)); err != nil {
		return fmt.Errorf("postgres: add search counts: %w", err)
	}
	return nil
}

// SearchTotals implements engine.Store.
func (s *Store) SearchTotals(ctx context.Context) (n, us int64, err error) {
	if err := s.pool.QueryRow(ctx, "SELECT coalesce(sum(searches), 0)::bigint, coalesce(sum(total_us), 0)::bigint FROM search_stats").Scan(&n, &us); err != nil {
		return 0, 0, fmt.Errorf("postgres: search counts: %w", err)
	}
	return n, us, nil
}
