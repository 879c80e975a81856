package engine

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
