package engine

import (
	"context"
	"sync/atomic"
	"time"
)

// searchFlushEvery is how many pending searches make a process writing to
// a Store add them after a write (addSearchesAfterWrite).
const searchFlushEvery = 64

// SearchCounts counts this process's searches not yet added to the
// store's totals. A search only adds to the atomics; the data dir's store
// takes them into its next message write transaction (no extra commit, so
// no extra fsync) or at Close (Host.Searches), another store gets them
// through Store.AddSearches. Safe for concurrent use.
type SearchCounts struct {
	n, us atomic.Int64
	wrote atomic.Bool // this process committed a message write
	// flushed is when (Unix ns) the counts last went to a Store.
	flushed atomic.Int64
}

// Take returns the pending searches and their total time in
// microseconds, leaving none pending.
func (c *SearchCounts) Take() (n, us int64) { return c.n.Swap(0), c.us.Swap(0) }

// Add makes n searches of us microseconds in all pending (again).
func (c *SearchCounts) Add(n, us int64) {
	c.n.Add(n)
	c.us.Add(us)
}

// SetWrote records that this process committed a message write.
func (c *SearchCounts) SetWrote() { c.wrote.Store(true) }

// Wrote reports whether this process committed a message write.
func (c *SearchCounts) Wrote() bool { return c.wrote.Load() }

// noteSearch counts one search that started at start, in memory only.
func (e *Engine) noteSearch(start time.Time) {
	e.searches.us.Add(time.Since(start).Microseconds())
	e.searches.n.Add(1)
}

// SearchStats are the searches of every process on this data dir.
type SearchStats struct {
	Searches int64   `json:"searches"`
	AvgMs    float64 `json:"avg_ms"`
}

// searchFlushInterval is how often, at most, a process writing to a
// Store adds its pending search counts after a write.
const searchFlushInterval = 10 * time.Second

// addSearchesAfterWrite adds the pending counts to the store after a
// write of this process: when searchFlushEvery are pending or
// searchFlushInterval passed since the last time. A failure keeps them
// pending.
func (e *Engine) addSearchesAfterWrite(ctx context.Context) {
	c := &e.searches
	c.wrote.Store(true)
	n := c.n.Load()
	last := c.flushed.Load()
	now := time.Now().UnixNano()
	if n == 0 || n < searchFlushEvery && now-last < int64(searchFlushInterval) || !c.flushed.CompareAndSwap(last, now) {
		return
	}
	e.moveSearches(ctx)
}

// moveSearches adds what is pending to the store.
func (e *Engine) moveSearches(ctx context.Context) {
	c := &e.searches
	n, us := c.n.Swap(0), c.us.Swap(0)
	if n == 0 {
		return
	}
	if err := e.store.AddSearches(ctx, n, us); err != nil {
		e.opts.Logger.Warn("search stats not saved", "err", err)
		c.n.Add(n)
		c.us.Add(us)
	}
}

// flushSearchesBeforeClose adds what is pending to the store before it
// closes, when this process wrote or searchFlushEvery searches are
// pending.
func (e *Engine) flushSearchesBeforeClose(ctx context.Context) {
	if n := e.searches.n.Load(); n == 0 || (!e.searches.wrote.Load() && n < searchFlushEvery) {
		return
	}
	e.moveSearches(ctx)
}
