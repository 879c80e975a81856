package engine

import (
	"context"
)

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

// VectorBacklog says how far the vectors of one model lag the messages.
type VectorBacklog struct {
	// Model is the model asked about: the argument of VectorBacklog, else
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

// VectorBacklog reports the backlog of model's vectors (see
// VectorBacklog.Model for an empty model). It reads SQLite only: no
// model or vector store is needed.
func (e *Engine) VectorBacklog(ctx context.Context, model string) (VectorBacklog, error) {
	done, err := e.enterStore()
	if err != nil {
		return VectorBacklog{}, err
	}
	defer done()
	return e.vectorBacklog(ctx, model)
}

// chooseModel sets Active from sets and Model: model, else emb's, else
// the active set's.
func (b *VectorBacklog) chooseModel(model string, emb Embedder, sets []VectorSet) {
	for _, s := range sets {
		if s.State == SetActive {
			b.Active = s.ModelID
		}
	}
	b.Model = model
	if b.Model == "" && emb != nil {
		b.Model = emb.ModelID()
	}
	if b.Model == "" {
		b.Model = b.Active
	}
}

func (e *Engine) vectorBacklog(ctx context.Context, model string) (VectorBacklog, error) {
	var b VectorBacklog
	var err error
	if b.Messages, err = e.store.Count(ctx); err != nil {
		return b, err
	}
	sets, err := e.store.Sets(ctx)
	if err != nil {
		return b, err
	}
	b.chooseModel(model, e.opts.Embedder, sets)
	b.Queued = b.Messages
	for _, s := range sets { // active first
		if b.Model != "" && s.ModelID == b.Model {
			b.Set, b.Queued = s.ID, s.Pending
			break
		}
	}
	return b, nil
}
