// Package engine is cairn's knowledge store: messages, channels and agents
// kept in one SQLite database (the source of truth) with an FTS5 keyword
// index kept in step inside the same transaction.
//
// # Data directory
//
// Open(ctx, dir, opts) owns dir:
//
//	dir/cairn.db      SQLite (messages, channels, agents, FTS5; later the outbox and sessions)
//	dir/vectors/      vecstore files (issue 6)
//	dir/models/       imported embedding models
//	dir/config.toml   configuration
//
// # On-disk format
//
// cairn.db is a SQLite 3 file whose header carries PRAGMA application_id =
// 0x6361726E ("carn") as its magic and PRAGMA user_version as its format
// version: the number of embedded migrations (migrations/NNNN_name.sql)
// applied. Open applies missing migrations in order, each in its own
// transaction together with the user_version bump, refuses a file whose
// version is newer than this build knows (ErrIncompatibleFormat, naming both
// versions), refuses a SQLite file of another application
// (ErrIncompatibleFormat) and reports a file that is not a database or is
// damaged as ErrCorrupt. Migrations are frozen once released; a schema change
// is a new numbered file. testdata/ keeps a frozen database of every format
// version, opened by a test forever.
//
// Timestamps are stored as INTEGER Unix milliseconds (UTC); confidence as
// REAL in [0,1]; metadata as a JSON object (TEXT); mentions as a JSON array
// of agent names; content_hash as the lower-case hex SHA-256 of the content.
//
// # Messages
//
// A message's int64 id is the join key everywhere: the FTS5 rowid, and the
// vector record id in later issues. Messages are immutable: there is no edit
// API. Writing the same content by the same sender to the same channel again
// returns the existing id with WriteResult.Created false.
//
// # Concurrency
//
// An *Engine is safe for concurrent use. Writes go through one pooled
// connection that begins transactions with BEGIN IMMEDIATE (one writer at a
// time in this process; other processes wait up to Options.BusyTimeout);
// reads use a separate pool of read-only connections and never block on the
// writer (WAL). Every pooled connection gets the pragmas journal_mode=WAL,
// busy_timeout, foreign_keys=ON and synchronous=NORMAL through the DSN.
//
// Lock order (outermost first): Engine.mu (Close vs. operations), then the
// SQLite write lock. No embedding or file I/O other than SQLite happens under
// Engine.mu's write side.
//
// # Imports
//
// engine may import fts, vecstore and index; it must not import embed,
// net/http, cmd/... or bench. It is the only package that imports the SQLite
// driver.
package engine
