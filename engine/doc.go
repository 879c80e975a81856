// Package engine is cairn's knowledge engine: messages, channels and
// agents, search over them (keyword, semantic, hybrid), read cursors and
// breadcrumb marks, over one store port (Store) that every store
// implements in full; the port's types include imported sessions,
// retention facts and backups, whose use cases are engine/ingest's
// (the Claude Code import, import and export) and engine/ops's
// (retention, gc, purge, quota, backups). The stores are
// packages of their own: engine/sqlite (the data dir: SQLite, FTS5, the
// outbox and vecstore, the default) and engine/postgres (PostgreSQL with
// pgvector); engine imports neither, and no storage code.
//
// # Messages
//
// A message's int64 id is the join key everywhere: the FTS5 rowid and (in
// decimal) the vector record id. Messages are immutable: there is no edit
// API. Writing the same content by the same sender to the same channel again
// returns the existing id with WriteResult.Created false.
//
// Deleted means gone: when DeleteMessage (or GC) returns, the text is in no
// file of the data dir. The data dir's writer connection has secure_delete on (SQLite
// zeroes deleted cells and freed pages), the FTS5 table has its
// secure-delete option (set on the first delete: entries are removed, not
// shadowed by delete markers), and the WAL, which still holds the frames
// as written, is checkpointed and truncated after the commit. GC always
// finishes with an FTS5 merge, VACUUM and a truncating checkpoint.
// Redaction (Options.Redactor) covers the content, every string value of
// the metadata, every breadcrumb, the channel id, sender, project and type
// of a message (as redacted-RULE-HASH names, the same for the same secret)
// and a created channel's id, name and description; created_at lies from MinCreatedAt to
// MaxCreatedAtAhead past the clock.
//
// # Concurrency
//
// An *Engine is safe for concurrent use. On the data dir (engine/sqlite),
// writes go through one pooled connection that begins transactions with BEGIN IMMEDIATE (one writer at a
// time in this process; other processes wait up to sqlite.Options.BusyTimeout);
// reads use a separate pool of read-only connections and never block on the
// writer (WAL). Every pooled connection gets the pragmas journal_mode=WAL,
// busy_timeout, foreign_keys=ON, synchronous=FULL (an acknowledged commit
// is on disk) and temp_store=MEMORY through the DSN; the writer also gets
// a 64 MiB page cache.
//
// A search reads on two goroutines at once, the caller's and one it joins
// before it returns (engine/retrieve.go): the query's embedding and vector
// search beside the keyword side, so every store read it makes must be
// safe for concurrent use, as the read pool, the in-memory BM25 index
// (fts.Index) and vecstore are.
//
// Lock order (outermost first): Engine.mu (Close vs. operations, shared by
// the Engine and its parts), then the SQLite write lock. No embedding or
// file I/O other than SQLite happens under Engine.mu's write side.
//
// # Use cases over the Engine
//
// The Engine owns messages, search and vectors. The use cases around them
// are packages over its API and its Store (Engine.Use, guarded against
// Close): engine/ingest imports Claude Code sessions (ingest.ImportSessions:
// their chunks are written through the store's session transaction, as
// StoreMessage writes a message) and reads and exports them, and imports and
// exports messages (ingest.ImportMessages, validated in full before
// anything is written; ingest.ExportMessages, whose format, versioned by
// its header line, is ingest.MessageExportFormat); engine/ops runs
// retention (ops.GC, ops.Purge and the size quota, whose deletions take
// the same path as DeleteMessage), backups (ops.Backup) and the checks,
// stats and vectors' upkeep. They are safe for concurrent use as the
// Engine is, and fail with ErrClosed once it closed.
//
// A read makes no durable write: a search counts itself in memory, and the
// counts reach the search_stats row inside the process's next message
// write (on a Store: after it, at most every 10 s unless 64 are
// pending), or at Close: into search_stats when the process wrote, else
// appended (no fsync) to dir/search-counts, which the next writer's Close
// adds to search_stats (engine/searchstats.go).
//
// # The storage boundary (engine/backend.go)
//
// Every operation on stored data goes through Store, the one port every
// store implements in full (a store that lacks an operation does not
// compile; nothing is probed at run time): writes, reads, listings,
// deletes, channels, agents, keyword and vector candidate retrieval (each
// store serves the whole Selection, unread_by and breadcrumbs_valid
// included), the reply lookup, turn context, rank facts, read cursors,
// breadcrumb marks, stats, the timeline, check and consistency, search
// counts, sessions, retention and the size quota, the transfer of
// sessions, cursors and marks as stored (ingest.TransferTo), rebuilds and the
// vectors. OpenBackend builds an Engine over any Store: the data dir's
// (package engine/sqlite: SQLite, FTS5 and the in-memory BM25 index,
// vecstore; sqlite.OpenEngine) or PostgreSQL's (package engine/postgres).
// The orchestration above it (validation, search planning, query
// analysis, fusion, the reply lift, ranking, snippets, and in
// engine/ingest and engine/ops the session import, the GC plan with its
// quota and the transfer) is one copy, called the same way for both.
// Each store fills its own vectors (Store.FillVectors: the data dir's
// outbox drain, engine/sqlite/doc.go, or engine/postgres's claims) from the Engine's one worker
// loop. A backup archives a data dir's files: PostgreSQL's store refuses
// it with an *InvalidError that names PostgreSQL's own tools.
// The store gets what it needs of the Engine through Store.Attach (Host):
// the search counter and the call that wakes the worker.
//
// # Read cursors (engine/unread.go)
//
// read_cursors keeps, per agent, the last message id read over everything,
// per channel and per project; a message is unread by an agent that did not
// write it while its id is above every cursor covering it. Ids come from
// AUTOINCREMENT inside a write transaction holding SQLite's one write lock,
// so they grow in commit order across processes and are never reused: a
// reader that marks read up to the largest id of one snapshot never passes
// over a message committed later (TestUnreadNeverSkipsConcurrentWrites
// holds it with writer processes). Cursors only move forward and never past
// the largest id assigned.
//
// # Breadcrumb marks (engine/crumbmarks.go)
//
// breadcrumb_marks caches, per message, what a check of its breadcrumbs
// against the git repository they were written in found, which repository
// that was (its top directory) and the HEAD commit it was made at. Live
// writes record the writer's repository in the metadata (RepoKey); a
// message that recorded none is adopted by the first check in a
// repository that holds its files. The engine never reads git itself:
// Options.BreadcrumbRepos reads a repository's HEAD by its path (a cheap
// file read, whatever the process's working directory), and the checks
// are handed in with ops.PutBreadcrumbMarks by cairn check --breadcrumbs or
// the background refresher of cairn serve / cairn mcp (which checks only
// its own repository's notes). Reads attach each message's marks only
// when they are of its repository's current HEAD, say the cache is stale
// otherwise, and keep the last marks of a repository not reachable from
// this machine; so a search waits for one indexed lookup, never for git,
// and marks never depend on where the reading process runs. The rows are
// deleted with their message (foreign key, ON DELETE CASCADE).
//
// # Vectors and the outbox (engine/sqlite: outbox.go, vecstore.go; worker.go; engine/ops)
//
// SQLite is the source of truth; vectors follow it through a durable
// outbox. Commit order: a write commits the message, its FTS5 row and one
// vector_outbox row per live vector set in one SQLite transaction. A
// background worker owned by the Engine (started by Open when an embedder
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
// exactly one of (outbox row, vector) exists, which ops.Check verifies. A drain
// of compactAfterRows rows or more in a row (ops.SyncVectors after a bulk
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
// a long-running process or by ops.SyncVectors or ops.Rebuild (which fills that
// set rather than building a second one, so each message is embedded
// once). ops.VectorBacklog and ops.StoreStats report the queue, and a search over
// a set with messages still queued says so (NoteVectorsBuilding). A process whose
// embedder differs from the active set's model searches by keyword only
// and says so (SearchResponse.Notes); ops.Rebuild with the new model builds a
// new set (state building) while the old one keeps serving processes that
// have the old model, then switches atomically and drops the old
// collection. An interrupted rebuild resumes from its outbox rows.
//
// # Search (engine/hybrid.go, ranking.go, where.go)
//
// A search is a pipeline of named steps (engine/hybrid.go), the same for
// every store: plan (the only step that rejects input;
// SearchRequest.Validate runs it too, so every surface validates alike),
// semantic, keyword, exactSimilarities, turnContext, fuse, the query boosts, liftReplies,
// blendRanks, rankCandidates and hydrate; each asks the store (Store) for what it
// retrieves.
//
// Before the two sides run, the query is read (engine/search:
// NameMentions, TimeMentions, IsQuestion): the capitalized names of senders and the dates it
// mentions are taken out of the text both sides search and boost the
// messages of those senders and times instead; a question in words fuses
// with more keyword weight than a query of keywords; in semantic mode a
// conversation turn is also scored with its neighbouring turns
// (engine/turncontext.go), and in hybrid mode a conversation's fused
// ranks are blended with those semantic ranks (search.BlendRanks). The
// steps that need no store (query analysis, calibration, fusion, the rank
// blend, the ranking formula) are package engine/search; package engine
// orchestrates them around the store's reads.
// Options.QueryAnalysis switches each part off, and switches on the reply
// lift (engine/replies.go), which the engine keeps off: each rule is kept
// only if, chosen on three LoCoMo dev conversations, it holds on the
// fourth (bench/README.md).
//
// Filters are applied before similarity on both sides: as a SQL WHERE on
// the FTS5 query and as a vecstore where (filter-first planner) on the
// vectors, from the same Filter (including a Chroma-style where over the
// vector metadata, evaluated identically by both). Hybrid mode takes the
// top max(100, 2*limit) of each side, computes the exact cosine similarity
// for keyword hits the vector list did not reach, turns each candidate's
// similarity and keyword evidence into one calibrated relevance
// (engine/search: roughly the probability that it is relevant, fitted on
// the dev sets, the same in every mode and store), drops the candidates
// below the relevance floor (SearchRequest.MinScore, search.DefaultFloor
// by default; listings have none) and applies the ranking profile. Keyword ranking is BM25 over the query's terms, dropping the
// terms found in more than half of the messages when another term
// remains (fts.Table.PruneFrequent). The in-memory keyword index
// (engine/sqlite/keyword_index.go, fts.Index: exact FTS5 BM25, built in the
// background after the process's first keyword search) answers it; until
// it is ready, or for a query it cannot mirror, FTS5 does, with the same
// hits.
//
// # Imports
//
// engine may import engine/search, fts, vecstore/chroma (the Chroma
// model's error classes, which VectorStoreError maps) and vecstore/where;
// it must not import database/sql, a SQLite driver, bbolt, vecstore,
// index or pgx (the stores below it do), embed, net/http, cmd/... or
// bench, or the use cases above it (engine/ingest, engine/ops, which
// import it) (arch_test.go).
package engine
