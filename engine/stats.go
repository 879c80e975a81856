package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// StoreStats is what `cairn stats` shows.
type StoreStats struct {
	Messages  int64            `json:"messages"`
	ByChannel map[string]int64 `json:"by_channel"`
	ByType    map[string]int64 `json:"by_type"`
	ByAgent   map[string]int64 `json:"by_agent"` // "name" or "name@project"
	Sessions  SessionStats     `json:"sessions"`
	// Search counts this process's searches and those other processes
	// stored, with their average time. A process stores its counts with
	// its next message write, or when it closes after writing or after 64
	// searches; a read-only process with fewer searches (a one-shot
	// `cairn search`) stores none, since a read makes no durable write.
	Search SearchStats `json:"search"`
	Bytes  DiskStats   `json:"bytes"`
	// Embedder holds the embedder's cache counters since this engine was
	// opened (nil without an embedder that keeps a cache).
	Embedder *EmbedderStats `json:"embedder,omitempty"`
	// Vectors is the backlog of the vectors of this engine's embedder,
	// else of the active set's model.
	Vectors VectorBacklog `json:"vectors"`
	Notes   []string      `json:"notes,omitempty"`
}

// SessionStats counts imported sessions.
type SessionStats struct {
	Sessions int64 `json:"sessions"`
	Records  int64 `json:"records"`
	Contents int64 `json:"contents"` // distinct contents stored
	Chunks   int64 `json:"chunks"`
	// DedupRatio is records with content per distinct content (>= 1).
	DedupRatio float64 `json:"dedup_ratio"`
}

// DiskStats is bytes on disk per part of the data dir. Tables, FTS5 and
// sessions are measured inside the SQLite file (dbstat), the rest by file
// sizes.
type DiskStats struct {
	Total    int64 `json:"total"`
	SQLite   int64 `json:"sqlite"`   // cairn.db + WAL
	Messages int64 `json:"messages"` // messages table and its indexes
	FTS      int64 `json:"fts"`      // messages_fts shadow tables
	Sessions int64 `json:"sessions"` // session tables and indexes
	Vectors  int64 `json:"vectors"`  // vectors/
	Graph    int64 `json:"graph"`    // graph/ (reserved in the data dir layout; 0 while nothing writes there)
	Models   int64 `json:"models"`   // models/
	Other    int64 `json:"other"`
	// VectorsPerMessage is Vectors over the number of messages, and
	// VectorsToMessages is Vectors over Messages: the storage budget of
	// the vectors (the design asks for under 2x the messages table). Both
	// are 0 without messages. Vectors counts Chroma collections too.
	VectorsPerMessage float64 `json:"vector_bytes_per_message"`
	VectorsToMessages float64 `json:"vectors_to_messages_table"`
}

// StoreStats counts messages per channel, type and agent, sessions, and
// bytes on disk per part, with the vector backlog, the embedder's cache and
// the searches of every process sharing the store.
func (e *Engine) StoreStats(ctx context.Context) (*StoreStats, error) {
	done, err := e.enterStore()
	if err != nil {
		return nil, err
	}
	defer done()
	backlog, err := e.vectorBacklog(ctx, "")
	if err != nil {
		return nil, err
	}
	bst, err := e.store.Stats(ctx)
	if err != nil {
		return nil, err
	}
	st := &StoreStats{ByChannel: bst.ByChannel, ByType: bst.ByType, ByAgent: bst.ByAgent, Sessions: bst.Sessions, Bytes: bst.Bytes,
		Vectors: backlog, Notes: bst.Notes}
	for _, n := range st.ByChannel {
		st.Messages += n
	}
	if e.dir != "" {
		models := dirBytes(filepath.Join(e.dir, "models"))
		st.Bytes.Models += models
		st.Bytes.Total += models
	}
	st.Bytes.perMessage(st.Messages)
	if es, ok := e.EmbedderStats(); ok {
		st.Embedder = &es
	} else {
		st.Notes = append(st.Notes, "embedding cache hit rate: no embedder with a cache in this process")
	}
	n, us, err := e.store.SearchTotals(ctx)
	if err != nil {
		return nil, fmt.Errorf("engine: stats: %w", err)
	}
	n, us = n+e.searches.n.Load(), us+e.searches.us.Load()
	st.Search = SearchStats{Searches: n}
	if n > 0 {
		st.Search.AvgMs = float64(us) / float64(n) / 1000
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

// perMessage sets the vectors' bytes per message and per byte of the
// messages table (both 0 without messages).
func (b *DiskStats) perMessage(messages int64) {
	if messages > 0 && b.Messages > 0 {
		b.VectorsPerMessage = float64(b.Vectors) / float64(messages)
		b.VectorsToMessages = float64(b.Vectors) / float64(b.Messages)
	}
}
