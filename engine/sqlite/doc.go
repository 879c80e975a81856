// Package sqlite is cairn's embedded store: the data dir, whose SQLite
// database is the source of truth, with an FTS5 keyword index kept in step
// inside the same transactions, the in-memory BM25 index over it, the
// vector outbox and the message vectors in vecstore. Store implements
// engine.Store in full; Open opens a data dir and OpenEngine an Engine
// over it. A *Store is safe for concurrent use (engine/doc.go's
// concurrency section holds for it).
//
// # Data directory
//
// Open(ctx, dir, opts, sopts) owns dir (sopts, Options, are the data
// dir's own settings: its SQLite connections and its vector store):
//
//	dir/cairn.db      SQLite (messages, channels, agents, FTS5, the vector outbox, sessions)
//	dir/vectors/      vecstore files (the message vectors and Chroma collections)
//	dir/models/       imported embedding models
//	dir/config.toml   configuration
//	dir/search-counts searches of processes that wrote nothing, until a writer adds them up
//	dir/.cairn-backup-*  a running backup's stage (leftovers.go)
//
// A new dir is 0700 and the files cairn creates in it 0600 (a stricter
// umask narrows them); an existing dir keeps its mode (Consistency warns).
// engine.Options.ReadOnly opens it without writing (no write check), on a
// full disk too: when SQLite cannot set up its shared-memory index it
// falls back to one connection that keeps the index in its own memory
// under an exclusive lock held until Close (reads work, and writers in
// other processes wait for this one); and on a dir this process may not
// write (another user's, a read-only mount) by reading cairn.db as an
// immutable file.
//
// # On-disk format
//
// cairn.db is a SQLite 3 file whose header carries PRAGMA application_id =
// 0x6361726E ("carn") as its magic and PRAGMA user_version as its format
// version: the number of embedded migrations (migrations/NNNN_name.sql)
// applied. Open applies missing migrations in order, each in its own
// transaction together with the user_version bump (and, for a migration
// that needs what SQL cannot compute, its Go step: migrationStep), refuses a file whose
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
// # Vectors and the outbox (outbox.go, vecstore.go; engine/worker.go, rebuild.go)
//
// SQLite is the source of truth; vectors follow it through a durable
// outbox. Commit order: a write commits the message, its FTS5 row and one
// vector_outbox row per live vector set in one SQLite transaction. A
// background worker owned by the Engine (started by OpenEngine when an embedder
// is configured or vector sets exist, unless Options.NoVectorWorker, as in
// one-shot processes; stopped by Close) claims outbox rows
// with a 60 s lease, skips messages whose vector is already stored (a crash
// between the vecstore write and the outbox delete never embeds twice),
// embeds the rest in batches, writes them to the set's vecstore collection
// (DIR/vectors, database "cairn", one collection per set recording the
// model id and dimension; record id = decimal message id; metadata
// channel_id, channel_type, agent_name, project_id, timestamp (Unix ms),
// confidence, message_type, word_count, has_breadcrumbs) and only then
// deletes the rows. Deleting a message queues a delete the same way. So a
// crash between the two steps is repaired by whichever process drains next
// (at the next Open at the latest), and for every live set and message
// exactly one of (outbox row, vector) exists, which Check verifies. A drain
// of compactAfterRows rows or more in a row (SyncVectors after a bulk
// import, the worker emptying a backlog) ends with vecstore's Compact, so
// the vector file is left without the free pages of its many transactions.
//
// Message collections store their vectors as 8-bit residual codes
// (chroma.CodeSQ8R: they can always be recomputed from the messages) and
// are built with ef_construction 200, ef_search 100. Collections written
// before keep float32 or plain SQ8 codes until ConvertVectors converts
// them in place (one vecstore
// transaction each, so a crash leaves each wholly converted or not); the
// worker runs it when it starts.
//
// Without an embedder the engine is keyword only and writes no outbox rows
// while no vector set exists; when a model first appears (Open with an
// embedder and no active set) a set is created and every stored message is
// queued in one transaction: the outbox is filled lazily, by the worker of
// a long-running process or by SyncVectors or Rebuild (which fills that
// set rather than building a second one, so each message is embedded
// once). VectorBacklog and StoreStats report the queue, and a search over
// a set with messages still queued says so (NoteVectorsBuilding). A process whose
// embedder differs from the active set's model searches by keyword only
// and says so (SearchResponse.Notes); Rebuild with the new model builds a
// new set (state building) while the old one keeps serving processes that
// have the old model, then switches atomically and drops the old
// collection. An interrupted rebuild resumes from its outbox rows.
//
// # Imports
//
// sqlite may import engine (the port it implements and the domain
// types), engine/search, fts and fts/ftssql (its FTS5 table and the
// in-memory index, run on database/sql), vecstore, vecstore/chroma and
// vecstore/where; it must not import engine/postgres, pgcollections,
// embed, net/http, cmd/... or bench (arch_test.go). It is the only
// package that imports the SQLite driver.
package sqlite
