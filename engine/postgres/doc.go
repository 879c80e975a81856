// Package postgres keeps cairn's messages in PostgreSQL with pgvector: the
// engine.Store that `cairn serve --store postgres://...` (and the CLI,
// MCP and config.toml's store) open with engine.OpenBackend. Several cairn
// processes, on one host or many, share one database with no coordination
// beyond it.
//
// # Schema and migrations
//
// migrations/NNNN_name.sql are applied in order at Open, each in its own
// transaction with the version bump in cairn_format (app 'cairn', version
// = migrations applied) and, for a migration that needs what SQL cannot
// compute, its Go step (migrationStep), under an advisory lock so that processes starting
// together apply each once. A database whose version is newer than this
// build knows is refused (engine.ErrIncompatibleFormat), as is a database
// whose cairn_format names another application. The tables mirror the
// SQLite store's: channels, agents and messages with the same constraints
// and the same idempotency key (content_hash, channel_id, sender_id).
//
// # Keyword search
//
// The cairn process tokenizes and stems each message as its FTS5 table
// does (fts.DocTerms) and stores the distinct terms, their frequencies and
// the length. The writer also adds one
// row per term to keyword_postings (term, message, frequency, length) and
// counts the term in keyword_terms (its document frequency); a statement trigger takes deleted messages out of
// both (migrations/0004). The score is BM25 computed in SQL from the
// postings with FTS5's constants (k1 1.2, b 0.75, idf log((N-n+0.5)/(n+0.5))
// floored at 1e-6), summed in query order, N and the token total coming
// from keyword_stats (keyword_search.go). The ranking is therefore
// cairn's BM25, not ts_rank, with the embedded store's scores.
//
// # Vectors
//
// Each vector set's vectors live in vectors_{set} (vector(dim)) with an
// HNSW index (vector_cosine_ops, Options.M and EfConstruction). A filtered
// search joins messages and runs with hnsw.iterative_scan = strict_order
// when the vector extension is 0.8 or later, so that a selective filter
// still returns k rows; earlier versions search without it (a selective
// filter may then return fewer). The outbox (vector_outbox) is claimed
// with leases (FOR UPDATE SKIP LOCKED) by FillVectors, which the engine's
// worker calls in whichever process has the model (fill.go: this process
// fills the set of its model); vectors and outbox rows go with their
// message (ON DELETE CASCADE).
//
// # Replies
//
// Replies (the reply lift of hybrid search) finds each asker's next
// message in its channel through messages_channel_time, as the embedded
// store does through its (channel_id, created_at) index, so both stores
// lift the same replies. Neighbours (the turn context of semantic search)
// reads each turn's previous and next message the same way. The unread_by
// and breadcrumbs_valid parts of a filter are served after the SQL
// (filter.go): retrieval asks for more until enough pass.
//
// # Operations
//
// The rest of engine.Store is in ops_*.go: channels with
// descriptions, stats and the timeline, the consistency check, read
// cursors (Unread takes a SHARE lock on messages for an instant, so that
// no id below the last one listed can still be uncommitted: ids come from
// a sequence, not in commit order), breadcrumb marks, retention (gc,
// purge), Claude Code sessions and rebuild (keyword entries, a vector set
// of another model). Migrations 0002 and 0003 add their tables. Also:
// the whole store read and written as stored for cairn migrate
// (ops_transfer.go), gc.max_bytes over the size of cairn's own tables with
// VACUUM FULL after a quota deletion (ops_quota.go), and the search counts
// of every process (ops_searchstats.go, migration 0006).
//
// # Imports
//
// postgres may import engine, fts, vecstore/where and internal/pgvector
// (and pgx); it must not depend on net/http, embed or cmd/..., and engine
// (which holds the embedded store) must not import it.
package postgres
