package engine

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// searchFlushEvery is how many pending searches make a process writing to
// a Store add them after a write (addSearchesAfterWrite).
const searchFlushEvery = 64

// searchCounter counts this process's searches not yet added to the
// search_stats row. A search only adds to the atomics; the counts reach the
// database inside the next message write transaction of this process (no
// extra commit, so no extra fsync) or at Close: into the database when the
// process wrote, else into searchCountsFile.
type searchCounter struct {
	n, us atomic.Int64
	wrote atomic.Bool // this process committed a message write
	// flushed is when (Unix ns) the counts last went to a Store.
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

// searchCountsFile holds the search counts of processes that wrote
// nothing (a one-shot `cairn search`): each appends one "searches
// microseconds" line at Close, without fsync (they are statistics, and a
// read makes no durable write), and the next process that writes to the
// database adds them to the search_stats row and removes the file.
const searchCountsFile = "search-counts"

// flushSearchesAtClose adds what is pending to the search_stats row, with
// the counts other processes left in searchCountsFile, when this process
// wrote to the database; otherwise it appends them to searchCountsFile.
// On failure the counts are lost with the process.
func (e *Engine) flushSearchesAtClose(ctx context.Context) {
	c := &e.searches
	if !c.wrote.Load() {
		if n, us := c.n.Swap(0), c.us.Swap(0); n > 0 && !e.immutable {
			appendSearchCounts(filepath.Join(e.dir, searchCountsFile), n, us)
		}
		return
	}
	n, us := c.n.Swap(0), c.us.Swap(0)
	// The file is renamed first, so that counts appended meanwhile go to
	// a new file for the next writer.
	path := filepath.Join(e.dir, searchCountsFile)
	taken := fmt.Sprintf("%s.%d-%d", path, os.Getpid(), time.Now().UnixNano())
	if os.Rename(path, taken) == nil {
		fn, fus := readSearchCounts(taken)
		n, us = n+fn, us+fus
	} else {
		taken = ""
	}
	if n == 0 {
		return
	}
	if _, err := e.w.ExecContext(ctx, addSearchStats, n, us); err != nil {
		e.opts.Logger.Warn("search stats not saved", "err", err)
		return
	}
	if taken != "" {
		os.Remove(taken)
	}
}

func appendSearchCounts(path string, n, us int64) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	// One write: appends of processes closing at once do not interleave.
	f.WriteString(strconv.FormatInt(n, 10) + " " + strconv.FormatInt(us, 10) + "\n")
	f.Close()
}

// readSearchCounts sums the lines of a searchCountsFile; a damaged line
// is skipped.
func readSearchCounts(path string) (n, us int64) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		a, b, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		ln, err1 := strconv.ParseInt(a, 10, 64)
		lus, err2 := strconv.ParseInt(b, 10, 64)
		if err1 == nil && err2 == nil && ln > 0 && lus >= 0 {
			n, us = n+ln, us+lus
		}
	}
	return n, us
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
