package engine

import (
	"context"
	"sync/atomic"
	"time"
)

// searchFlushEvery is how many searches a process counts before it adds
// them to the database's totals in the background.
const searchFlushEvery = 64

// searchCounter counts this process's searches not yet added to the
// search_stats row; Close and StoreStats flush it, and every
// searchFlushEvery searches a background flush does.
type searchCounter struct {
	n, us    atomic.Int64
	flushing atomic.Bool
}

// noteSearch counts one search that started at start.
func (e *Engine) noteSearch(start time.Time) {
	c := &e.searches
	c.us.Add(time.Since(start).Microseconds())
	if c.n.Add(1) < searchFlushEvery || !c.flushing.CompareAndSwap(false, true) {
		return
	}
	// The background flush holds the engine's read lock, so Close (which
	// takes the write lock, then flushes what is left) waits for it.
	if !e.mu.TryRLock() {
		c.flushing.Store(false)
		return
	}
	if e.mu.closed {
		e.mu.RUnlock()
		c.flushing.Store(false)
		return
	}
	go func() {
		defer c.flushing.Store(false)
		defer e.mu.RUnlock()
		e.flushSearches(context.Background())
	}()
}

// flushSearches adds the pending counts to the search_stats row; on
// failure they are put back for the next flush.
func (e *Engine) flushSearches(ctx context.Context) {
	c := &e.searches
	n, us := c.n.Swap(0), c.us.Swap(0)
	if n == 0 {
		return
	}
	if _, err := e.w.ExecContext(ctx, "UPDATE search_stats SET searches = searches + ?, total_us = total_us + ? WHERE id = 1", n, us); err != nil {
		c.n.Add(n)
		c.us.Add(us)
		e.opts.Logger.Warn("search stats not saved", "err", err)
	}
}

// SearchStats are the searches of every process on this data dir.
type SearchStats struct {
	Searches int64   `json:"searches"`
	AvgMs    float64 `json:"avg_ms"`
}

func (e *Engine) searchStats(ctx context.Context) (SearchStats, error) {
	e.flushSearches(ctx)
	var n, us int64
	if err := e.r.QueryRowContext(ctx, "SELECT searches, total_us FROM search_stats WHERE id = 1").Scan(&n, &us); err != nil {
		return SearchStats{}, classify(err)
	}
	st := SearchStats{Searches: n}
	if n > 0 {
		st.AvgMs = float64(us) / float64(n) / 1000
	}
	return st, nil
}
