package engine

import (
	"context"
	"fmt"
)

// The few doors the use cases of engine/ingest and engine/ops go through:
// they run over the Engine's public API and the store port, and these
// hand them what only the Engine holds (its store behind the close guard,
// its options, its in-memory search counts) without exporting the rest.

// Use runs f with the Engine's store, guarded against Close: f may use the
// store until it returns, and Close waits for it. It returns ErrClosed
// after Close, else f's error. f must not call Close.
func (e *Engine) Use(f func(Store) error) error {
	done, err := e.enterStore()
	if err != nil {
		return err
	}
	defer done()
	return f(e.store)
}

// Options returns the options the Engine was opened with, defaults
// applied (Now, Logger ... are never nil).
func (e *Engine) Options() Options { return e.opts }

// SearchStats returns the searches of every process sharing the store:
// those the store holds and this process's not yet stored.
func (e *Engine) SearchStats(ctx context.Context) (SearchStats, error) {
	done, err := e.enterStore()
	if err != nil {
		return SearchStats{}, err
	}
	defer done()
	n, us, err := e.store.SearchTotals(ctx)
	if err != nil {
		return SearchStats{}, fmt.Errorf("engine: stats: %w", err)
	}
	n, us = n+e.searches.n.Load(), us+e.searches.us.Load()
	st := SearchStats{Searches: n}
	if n > 0 {
		st.AvgMs = float64(us) / float64(n) / 1000
	}
	return st, nil
}
