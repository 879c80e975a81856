package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
// bytes on disk per part.
func (e *Engine) StoreStats(ctx context.Context) (*StoreStats, error) {
	if e.bs != nil {
		return e.backendStoreStats(ctx)
	}
	done, err := e.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	st := &StoreStats{ByChannel: map[string]int64{}, ByType: map[string]int64{}, ByAgent: map[string]int64{}}
	group := func(q string, into map[string]int64) error {
		rows, err := e.r.QueryContext(ctx, q)
		if err != nil {
			return fmt.Errorf("engine: stats: %w", classify(err))
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var n int64
			if err := rows.Scan(&k, &n); err != nil {
				return classify(err)
			}
			into[k] = n
		}
		return classify(rows.Err())
	}
	if err := group("SELECT channel_id, count(*) FROM messages GROUP BY channel_id", st.ByChannel); err != nil {
		return nil, err
	}
	if err := group("SELECT message_type, count(*) FROM messages GROUP BY message_type", st.ByType); err != nil {
		return nil, err
	}
	if err := group("SELECT CASE WHEN sender_project_id = '' THEN sender_id ELSE sender_id || '@' || sender_project_id END, count(*) FROM messages GROUP BY 1", st.ByAgent); err != nil {
		return nil, err
	}
	for _, n := range st.ByChannel {
		st.Messages += n
	}
	row := e.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM session_messages),
		(SELECT count(*) FROM session_contents), (SELECT count(*) FROM session_chunks),
		(SELECT count(*) FROM session_messages WHERE content_hash IS NOT NULL)`)
	var withContent int64
	if err := row.Scan(&st.Sessions.Sessions, &st.Sessions.Records, &st.Sessions.Contents, &st.Sessions.Chunks, &withContent); err != nil {
		return nil, fmt.Errorf("engine: stats: %w", classify(err))
	}
	if st.Sessions.Contents > 0 {
		st.Sessions.DedupRatio = float64(withContent) / float64(st.Sessions.Contents)
	}

	fileBytes(e.dir, &st.Bytes)
	if err := e.tableBytes(ctx, st); err != nil {
		return nil, err
	}
	st.Bytes.perMessage(st.Messages)
	if es, ok := e.EmbedderStats(); ok {
		st.Embedder = &es
	} else {
		st.Notes = append(st.Notes, "embedding cache hit rate: no embedder with a cache in this process")
	}
	if st.Vectors, err = e.vectorBacklog(ctx, ""); err != nil {
		return nil, err
	}
	ss, err := e.searchStats(ctx)
	if err != nil {
		return nil, fmt.Errorf("engine: stats: %w", err)
	}
	st.Search = ss
	return st, nil
}

// perMessage sets the vectors' bytes per message and per byte of the
// messages table (both 0 without messages).
func (b *DiskStats) perMessage(messages int64) {
	if messages > 0 && b.Messages > 0 {
		b.VectorsPerMessage = float64(b.Vectors) / float64(messages)
		b.VectorsToMessages = float64(b.Vectors) / float64(b.Messages)
	}
}

// fileBytes adds up the sizes of the files of the data dir dir by part.
func fileBytes(dir string, b *DiskStats) {
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		n := info.Size()
		b.Total += n
		switch {
		case rel == DBFile || rel == DBFile+"-wal":
			b.SQLite += n
		case rel == DBFile+"-shm":
			b.Other += n
		case strings.HasPrefix(rel, "vectors/"):
			b.Vectors += n
		case strings.HasPrefix(rel, "graph/"):
			b.Graph += n
		case strings.HasPrefix(rel, "models/"):
			b.Models += n
		default:
			b.Other += n
		}
		return nil
	})
}

// tableBytes adds the bytes of the messages, FTS5 and session tables and
// their indexes inside the SQLite file (dbstat counts pages of the main
// file); without dbstat it says so in st.Notes.
func (e *Engine) tableBytes(ctx context.Context, st *StoreStats) error {
	// The index names first: one query at a time, so that this also works
	// on a single connection (Options.ReadOnly's fallback).
	idx := map[string]string{}
	irows, err := e.r.QueryContext(ctx, "SELECT name, tbl_name FROM sqlite_schema WHERE type = 'index'")
	if err == nil {
		for irows.Next() {
			var n, tbl string
			if irows.Scan(&n, &tbl) == nil {
				idx[n] = tbl
			}
		}
		irows.Close()
	}
	rows, err := e.r.QueryContext(ctx, "SELECT name, sum(pgsize) FROM dbstat GROUP BY name")
	if err != nil {
		st.Notes = append(st.Notes, "per-table sizes unavailable: "+err.Error())
		return nil
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return classify(err)
		}
		tbl := name
		if t, ok := idx[name]; ok {
			tbl = t
		} else if strings.HasPrefix(name, "sqlite_autoindex_") {
			tbl = strings.TrimSuffix(strings.TrimPrefix(name, "sqlite_autoindex_"), "_1")
			if i := strings.LastIndexByte(tbl, '_'); i > 0 && strings.HasPrefix(name, "sqlite_autoindex_") {
				tbl = tbl[:i]
			}
		}
		switch {
		case strings.HasPrefix(tbl, "messages_fts"):
			st.Bytes.FTS += n
		case tbl == "messages":
			st.Bytes.Messages += n
		case strings.HasPrefix(tbl, "session"):
			st.Bytes.Sessions += n
		}
	}
	return nil
}
