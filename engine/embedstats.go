package engine

// EmbedderCache reports an embedder's cache counters. Embedders that keep
// a cache (embed.Model) implement it; EmbedderStats reads it for metrics.
type EmbedderCache interface {
	CacheCounters() (texts, hits, misses uint64)
}

// EmbedderStats are the engine's embedder's counters since it was opened.
type EmbedderStats struct {
	Texts       uint64  `json:"texts"`
	CacheHits   uint64  `json:"cache_hits"`
	CacheMisses uint64  `json:"cache_misses"`
	HitRate     float64 `json:"hit_rate"`
}

// EmbedderStats returns the embedder's cache counters; false when there is
// no embedder or it keeps no cache.
func (e *Engine) EmbedderStats() (EmbedderStats, bool) {
	c, ok := e.opts.Embedder.(EmbedderCache)
	if !ok {
		return EmbedderStats{}, false
	}
	texts, hits, misses := c.CacheCounters()
	st := EmbedderStats{Texts: texts, CacheHits: hits, CacheMisses: misses}
	if hits+misses > 0 {
		st.HitRate = float64(hits) / float64(hits+misses)
	}
	return st, true
}
