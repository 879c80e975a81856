package sqlite

import "time"

// Options configure what only the data dir's store has: its SQLite
// connections and its vector store. The zero value means defaults. The
// settings every store shares (clock, logger, embedder, ReadOnly ...) are
// engine.Options, given beside them.
type Options struct {
	// BusyTimeout is how long a statement waits for another process's
	// lock; 0 means 5 s.
	BusyTimeout time.Duration
	// ReadConns is the size of the read connection pool; 0 means 4.
	ReadConns int
	// VectorStore configures the data dir's vector store (DIR/vectors),
	// which Store.VectorStore hands out.
	VectorStore VectorStoreOptions
}

// VectorStoreOptions configures the data dir's vector store (DIR/vectors).
// The zero value opens it only when an embedder or a vector set needs it.
type VectorStoreOptions struct {
	// Open opens the store even when neither an embedder nor a vector set
	// needs it, for a process that serves collections (cairn serve's Chroma
	// API) besides messages.
	Open bool
	// AllowReset enables the store's Reset (Chroma's allow_reset), which
	// deletes every collection but the engine's message vectors (database
	// VectorDatabase).
	AllowReset bool
}

// withDefaults checks o and fills in the defaults of its zero fields.
func (o Options) withDefaults() (Options, error) {
	if o.BusyTimeout < 0 {
		return o, invalid("Options.BusyTimeout", "must be >= 0, got %s", o.BusyTimeout)
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.ReadConns < 0 {
		return o, invalid("Options.ReadConns", "must be >= 0, got %d", o.ReadConns)
	}
	if o.ReadConns == 0 {
		o.ReadConns = 4
	}
	return o, nil
}
