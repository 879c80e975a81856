package engine

import (
	"context"
	"database/sql"
	"sync/atomic"
	"time"
)

// searchFlushEvery is how many pending searches make a process that never
// wrote add them to the database's totals when it closes. Below it a
// read-only process (a one-shot `cairn search`) keeps them in memory only:
// a read makes no durable write.
const searchFlushEvery = 64

// searchCounter counts this process's searches not yet added to the
// search_stats row. A search only adds to the atomics; the counts reach the
// database inside the next message write transaction of this process (no
// extra commit, so no extra fsync) or at Close when the process wrote or
// has at least searchFlushEvery pending.
type searchCounter struct {
	n, us atomic.Int64
	wrote atomic.Bool // this process committed a message write
	// flushed is when (Unix ns) the counts last went to a Backend.
	flushed atomic.Int64
}

// addSearchStats adds a number of searches and their total time to the
// stored totals.
const addSearchStats = "UPDATE search_stats SET searches = searches + ?, total_us = total_us + ? WHERE id = 1"

// noteSearch counts one search that started at start, in memory only.
func (e *Engine) noteSearch(start time.Time) {
	e.searches.us.Add(time.Since(start).Microseconds())
	e.searches.n.Add(1)
}

// addSearchesTx moves the pending counts into the search_stats row inside
// tx, a message write transaction the caller commits anyway. Call the
// returned func with whether tx committed: otherwise the counts are put
// back. A failure to count never fails the write: the counts wait for the
// next one.
func (e *Engine) addSearchesTx(ctx context.Context, tx *sql.Tx) func(committed bool) {
	c := &e.searches
	n, us := c.n.Swap(0), c.us.Swap(0)
	restore := func(committed bool) {
		if committed {
			c.wrote.Store(true)
			return
		}
		c.n.Add(n)
		c.us.Add(us)
	}
	if n == 0 {
		return restore
	}
	if _, err := tx.ExecContext(ctx, addSearchStats, n, us); err != nil {
		e.opts.Logger.Warn("search stats not saved with this write", "err", err)
		c.n.Add(n)
		c.us.Add(us)
		return func(committed bool) {
			if committed {
				c.wrote.Store(true)
			}
		}
	}
	return restore
}

// flushSearchesAtClose adds what is pending to the search_stats row when this
// process already wrote to the database or counted enough searches to be
// worth one commit; on failure the counts are lost with the process.
func (e *Engine) flushSearchesAtClose(ctx context.Context) {
	c := &e.searches
	if n := c.n.Load(); n == 0 || (!c.wrote.Load() && n < searchFlushEvery) {
		return
	}
	n, us := c.n.Swap(0), c.us.Swap(0)
	if _, err := e.w.ExecContext(ctx, addSearchStats, n, us); err != nil {
		e.opts.Logger.Warn("search stats not saved", "err", err)
	}
}

// SearchStats are the searches of every process on this data dir.
type SearchStats struct {
	Searches int64   `json:"searches"`
	AvgMs    float64 `json:"avg_ms"`
}

// searchStats reads the stored totals and adds this process's pending
// counts; it writes nothing.
func (e *Engine) searchStats(ctx context.Context) (SearchStats, error) {
	var n, us int64
	if err := e.r.QueryRowContext(ctx, "SELECT searches, total_us FROM search_stats WHERE id = 1").Scan(&n, &us); err != nil {
		return SearchStats{}, classify(err)
	}
	n += e.searches.n.Load()
	us += e.searches.us.Load()
	st := SearchStats{Searches: n}
	if n > 0 {
		st.AvgMs = float64(us) / float64(n) / 1000
	}
	return st, nil
}

// searchFlushInterval is how often, at most, a process writing to a
// Backend adds its pending search counts after a write.
const searchFlushInterval = 10 * time.Second

// addSearchesToBackend adds the pending counts to a SearchCountStore
// after a write of this process: when searchFlushEvery are pending or
// searchFlushInterval passed since the last time. A failure keeps them
// pending.
func (e *Engine) addSearchesToBackend(ctx context.Context, sc SearchCountStore) {
	c := &e.searches
	c.wrote.Store(true)
	n := c.n.Load()
	last := c.flushed.Load()
	now := time.Now().UnixNano()
	if n == 0 || n < searchFlushEvery && now-last < int64(searchFlushInterval) || !c.flushed.CompareAndSwap(last, now) {
		return
	}
	e.moveSearchesToBackend(ctx, sc)
}

// moveSearchesToBackend adds what is pending to sc.
func (e *Engine) moveSearchesToBackend(ctx context.Context, sc SearchCountStore) {
	c := &e.searches
	n, us := c.n.Swap(0), c.us.Swap(0)
	if n == 0 {
		return
	}
	if err := sc.AddSearches(ctx, n, us); err != nil {
		e.opts.Logger.Warn("search stats not saved", "err", err)
		c.n.Add(n)
		c.us.Add(us)
	}
}

// flushSearchesToBackendAtClose is flushSearchesAtClose on a Backend.
func (e *Engine) flushSearchesToBackendAtClose(ctx context.Context) {
	sc, ok := e.store.(SearchCountStore)
	if !ok {
		return
	}
	if n := e.searches.n.Load(); n == 0 || (!e.searches.wrote.Load() && n < searchFlushEvery) {
		return
	}
	e.moveSearchesToBackend(ctx, sc)
}
