package engine

// KeywordIndexReady reports whether the in-memory keyword index has been
// built (after the process's first keyword search), so that keyword
// search ranks by exact BM25 over every query term; until then FTS5 ranks
// without the terms found in more than a third of the messages. Benchmarks
// that compare rankings wait for it.
func (e *Engine) KeywordIndexReady() bool {
	return e.kw != nil && !e.kw.off.Load() && e.kw.mem.Ready()
}
