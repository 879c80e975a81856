package sqlite

// KeywordIndexReady reports whether the in-memory keyword index has been
// built (after the process's first keyword search) and answers keyword
// searches; until then FTS5 does, with the same hits, more slowly.
// Benchmarks that time keyword search wait for it.
func (e *Store) KeywordIndexReady() bool {
	return e.kw != nil && !e.kw.off.Load() && e.kw.mem.Ready()
}
