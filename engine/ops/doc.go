// Package ops holds the operations that agents' hooks, maintenance and
// the commands around a store run on an open engine: the check and
// consistency report of a store (Check, Consistency), the rebuild of
// what is derived from the messages (Rebuild), the vectors' sets, backlog
// and filling (VectorSets, VectorBacklog, SyncVectors), the counts of a
// store (StoreStats, EmbedderStats), retention (GC by the retention
// policies, with the imported sessions' age and the size quota
// gc.max_bytes; Purge of a channel, an agent or a session), the backup of
// a store (Backup; restores and checks of an archive need no engine:
// engine/sqlite), the breadcrumb marks cache the checks against git fill
// (PutBreadcrumbMarks, MessagesToMark, CachedMarks,
// MessagesWithBreadcrumbs), the scheduled jobs of a long-running process (RunLifecycle,
// StartLifecycle: retention and the export of changed channels and
// sessions), the continuous export (Exporter: the commit observer,
// engine.Options.Observer, that exports the channels each committed write
// changed, whichever surface wrote), and the recall that puts stored memory into an agent's
// context (a session-start briefing and a per-prompt search within a
// token budget, each line marked when its breadcrumbs went stale) with
// the per-session record of what was already recalled, so that nothing
// is recalled twice in a session.
//
// An operation runs over the Engine's API and the store port
// (engine.Store, through Engine.Use, which guards it against Close); it
// never reaches a store's files or drivers. Recall's search is
// Engine.Search, so whatever relevance floor and ranking the search
// applies, recall applies too. A per-prompt recall also passes the
// search's results through the prompt gate of engine/search, and injects
// nothing when they hold too little of the prompt for their relevance.
// SessionLog keeps its files in a directory it is given (the data dir's
// recall-sessions); each file is small, written to a temporary file and
// renamed, and losing one only means a message may be recalled again.
//
// Functions are safe for concurrent use as the Engine is (on different
// sessions for SessionLog); two processes recording the same session at
// once may lose one's ids (a repeat, never an error). An Exporter and a
// Lifecycle own their goroutines: an engine's Close waits for its export,
// Lifecycle.Stop for the jobs. ops imports engine, engine/search and
// engine/ingest only: no store (engine/sqlite, engine/postgres), no
// database/sql, SQLite, bbolt or pgx, no net/http, nothing of cmd or
// bench (arch_test.go).
package ops
