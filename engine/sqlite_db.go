package engine

import (
	"context"
	"database/sql"
	"sync"
)

// db is the data dir's SQLite database as every part of the engine shares
// it: the Engine (messages, search, vectors) and the small types over the
// same handle (Sessions, Retention, Backups). Close guards all of them
// through mu.
type db struct {
	dir  string
	opts Options

	mu struct {
		sync.RWMutex
		closed bool
	}
	w *sql.DB // one connection, BEGIN IMMEDIATE
	r *sql.DB // read-only pool
	// sharedConn: r is w (Options.ReadOnly's fallback on a full disk).
	sharedConn bool
	// immutable: the data dir is not writable and the database is read
	// as an immutable file (openSQLiteImmutable).
	immutable bool
	// backend names the store of an Engine over a Store ("": this
	// SQLite database); operations that need SQLite refuse it.
	backend string
}

// enter guards an operation against Close; call the returned func when done.
func (d *db) enter() (func(), error) {
	d.mu.RLock()
	if d.mu.closed {
		d.mu.RUnlock()
		return nil, ErrClosed
	}
	if d.backend != "" {
		d.mu.RUnlock()
		return nil, unsupportedOnBackend(d.backend)
	}
	return d.mu.RUnlock, nil
}

// messageStore is what Sessions and Retention need of the Engine's message
// store: session chunks are searchable messages written through the same
// path (FTS5 row, vector outbox row), and retention reads and deletes
// messages the same way DeleteMessage does.
type messageStore interface {
	prepare(NewMessage) (prepared, error)
	writeTx(ctx context.Context, tx *sql.Tx, p prepared) (WriteResult, error)
	getMessages(ctx context.Context, ids []int64) ([]Message, error)
	deleteMessagesTx(ctx context.Context, tx *sql.Tx, ids []int64) error
	wakeVectors()
}
