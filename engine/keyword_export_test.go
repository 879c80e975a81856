package engine

import "github.com/cairn-dev/cairn/fts"

// SetKeywordIndex turns the in-memory keyword index off (FTS5 only) or on,
// for benchmarks and tests that compare the two paths. With on, it builds
// the index now (synchronously) when it is not built yet, and reports
// whether it has diverged from FTS5.
func (e *Engine) SetKeywordIndex(on bool) error {
	e.kw.off.Store(!on)
	if on && !e.kw.mem.Ready() {
		e.kw.once.Do(func() {})
		if err := e.kw.mem.Build(e.kw.ctx, e.r); err != nil {
			return err
		}
	}
	if on {
		return e.kw.mem.Err() // diverged: searches would silently use FTS5
	}
	return nil
}

// KeywordIndexStats returns the in-memory keyword index's size.
func (e *Engine) KeywordIndexStats() fts.IndexStats { return e.kw.mem.Stats() }

// BuildFreshKeywordIndex builds a new in-memory keyword index from SQLite
// (the work of the first search's background build) and installs it.
func (e *Engine) BuildFreshKeywordIndex() error {
	k := newMemKeywordIndex(e.fts)
	k.once.Do(func() {})
	if err := k.mem.Build(k.ctx, e.r); err != nil {
		return err
	}
	old := e.kw
	k.off.Store(old.off.Load())
	e.kw = k
	old.close()
	return nil
}
