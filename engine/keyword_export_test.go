package engine

import "github.com/cairn-dev/cairn/fts"

// SetKeywordIndex turns the in-memory keyword index off (FTS5 only) or on,
// for benchmarks and tests that compare the two paths. With on, it builds
// the index now (synchronously) when it is not built yet, and reports
// whether it has diverged from FTS5.
func (e *Engine) SetKeywordIndex(on bool) error {
	s := e.dataDir()
	s.kw.off.Store(!on)
	if on && !s.kw.mem.Ready() {
		s.kw.once.Do(func() {})
		if err := s.kw.mem.Build(s.kw.ctx, s.r); err != nil {
			return err
		}
	}
	if on {
		return s.kw.mem.Err() // diverged: searches would silently use FTS5
	}
	return nil
}

// KeywordIndexStats returns the in-memory keyword index's size.
func (e *Engine) KeywordIndexStats() fts.IndexStats { return e.dataDir().kw.mem.Stats() }

// BuildFreshKeywordIndex builds a new in-memory keyword index from SQLite
// (the work of the first search's background build) and installs it.
func (e *Engine) BuildFreshKeywordIndex() error {
	s := e.dataDir()
	k := newMemKeywordIndex(s.fts)
	k.once.Do(func() {})
	if err := k.mem.Build(k.ctx, s.r); err != nil {
		return err
	}
	old := s.kw
	k.off.Store(old.off.Load())
	s.kw = k
	old.close()
	return nil
}
