package ops

import (
	"context"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/engine"
)

// StoreStats counts messages per channel, type and agent, sessions, and
// bytes on disk per part, with the vector backlog, the embedder's cache and
// the searches of every process sharing the store.
func StoreStats(ctx context.Context, eng *engine.Engine) (*engine.StoreStats, error) {
	var st *engine.StoreStats
	err := eng.Use(func(s engine.Store) error {
		backlog, err := vectorBacklog(ctx, eng, s, "")
		if err != nil {
			return err
		}
		bst, err := s.Stats(ctx)
		if err != nil {
			return err
		}
		st = &engine.StoreStats{ByChannel: bst.ByChannel, ByType: bst.ByType, ByAgent: bst.ByAgent, Sessions: bst.Sessions, Bytes: bst.Bytes,
			Vectors: backlog, Notes: bst.Notes}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, n := range st.ByChannel {
		st.Messages += n
	}
	if dir := eng.Dir(); dir != "" {
		models := dirBytes(filepath.Join(dir, "models"))
		st.Bytes.Models += models
		st.Bytes.Total += models
	}
	if st.Messages > 0 && st.Bytes.Messages > 0 {
		st.Bytes.VectorsPerMessage = float64(st.Bytes.Vectors) / float64(st.Messages)
		st.Bytes.VectorsToMessages = float64(st.Bytes.Vectors) / float64(st.Bytes.Messages)
	}
	if es, ok := EmbedderStats(eng); ok {
		st.Embedder = &es
	} else {
		st.Notes = append(st.Notes, "embedding cache hit rate: no embedder with a cache in this process")
	}
	if st.Search, err = eng.SearchStats(ctx); err != nil {
		return nil, err
	}
	return st, nil
}

// dirBytes adds up the sizes of the files below dir.
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			n += info.Size()
		}
		return nil
	})
	return n
}

// EmbedderStats returns the cache counters of eng's embedder since it was
// opened; false when there is no embedder or it keeps no cache
// (engine.EmbedderCache).
func EmbedderStats(eng *engine.Engine) (engine.EmbedderStats, bool) {
	c, ok := eng.Options().Embedder.(engine.EmbedderCache)
	if !ok {
		return engine.EmbedderStats{}, false
	}
	texts, hits, misses := c.CacheCounters()
	st := engine.EmbedderStats{Texts: texts, CacheHits: hits, CacheMisses: misses}
	if hits+misses > 0 {
		st.HitRate = float64(hits) / float64(hits+misses)
	}
	return st, true
}

// VectorBacklog reports the backlog of model's vectors (see
// engine.VectorBacklog.Model for an empty model). It reads the store's
// counts only: no model or vector store is needed.
func VectorBacklog(ctx context.Context, eng *engine.Engine, model string) (engine.VectorBacklog, error) {
	var b engine.VectorBacklog
	err := eng.Use(func(s engine.Store) error {
		var err error
		b, err = vectorBacklog(ctx, eng, s, model)
		return err
	})
	return b, err
}

// vectorBacklog is VectorBacklog on eng's store s.
func vectorBacklog(ctx context.Context, eng *engine.Engine, s engine.Store, model string) (engine.VectorBacklog, error) {
	var b engine.VectorBacklog
	var err error
	if b.Messages, err = s.Count(ctx); err != nil {
		return b, err
	}
	sets, err := s.Sets(ctx)
	if err != nil {
		return b, err
	}
	// Model: model, else the embedder's, else the active set's.
	for _, set := range sets {
		if set.State == engine.SetActive {
			b.Active = set.ModelID
		}
	}
	b.Model = model
	if emb := eng.Options().Embedder; b.Model == "" && emb != nil {
		b.Model = emb.ModelID()
	}
	if b.Model == "" {
		b.Model = b.Active
	}
	b.Queued = b.Messages
	for _, set := range sets { // active first
		if b.Model != "" && set.ModelID == b.Model {
			b.Set, b.Queued = set.ID, set.Pending
			break
		}
	}
	return b, nil
}
