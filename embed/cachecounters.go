package embed

// CacheCounters returns the texts embedded and the cache's hits and misses
// since Open (engine.EmbedderCache, for metrics).
func (m *Model) CacheCounters() (texts, hits, misses uint64) {
	st := m.Stats()
	return st.Texts, st.CacheHits, st.CacheMisses
}
