package engine

// EmbedderCache reports an embedder's cache counters. Embedders that keep
// a cache (embed.Model) implement it; ops.EmbedderStats reads it for metrics.
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

// VectorBacklog says how far the vectors of one model lag the messages.
type VectorBacklog struct {
	// Model is the model asked about: the argument of ops.VectorBacklog, else
	// this engine's embedder's, else the active set's ("" when none).
	Model    string `json:"model,omitempty"`
	Messages int64  `json:"messages"`
	// Set is Model's live vector set (0 when it has none yet).
	Set int64 `json:"set,omitempty"`
	// Queued is the number of messages still waiting for a vector of
	// Model: its set's queued messages, or every message when it has no
	// set yet (the first process that runs with Model queues them all).
	Queued int64 `json:"queued"`
	// Active is the model of the active vector set ("" when none).
	Active string `json:"active,omitempty"`
}
