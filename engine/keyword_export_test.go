package engine

// SetKeywordIndex turns the in-memory keyword index off (FTS5 only) or on,
// for benchmarks and tests that compare the two paths. With on, it builds
// the index now (synchronously) when it is not built yet.
func (e *Engine) SetKeywordIndex(on bool) error {
	e.kw.off.Store(!on)
	if on && !e.kw.ix.Ready() {
		e.kw.once.Do(func() {})
		return e.kw.ix.Build(e.kw.ctx, e.r)
	}
	return nil
}
