// Package ingest moves messages into and out of an engine: the import of
// Claude Code sessions (ImportSessions: each file in one transaction of
// the store, resumed where the last import stopped, its records' contents
// redacted, chunked and stored as searchable messages of
// engine.SessionChannel), their reads (GetSession, ListSessions,
// SessionRecords, SessionRefs) and their copies as Claude Code JSONL and
// Markdown (WriteSessionJSONL, WriteSessionMarkdown, ExportSessions), the
// import of messages from JSONL (ImportMessages: validated in full before anything
// is written, then stored in batches, idempotently), their export to one
// JSONL and Markdown file per channel (ExportMessages, whose JSONL format
// is versioned by its header line: MessageExportFormat), and the copy of
// a whole store into another, between a data dir and PostgreSQL either
// way (CopyChannelsTo, CopyMessagesTo, TransferTo, which cairn migrate
// runs).
//
// Every function runs over the Engine's API and the store port
// (engine.Store, through Engine.Use, which guards it against Close), so
// it works the same on every store; it is safe for concurrent use as the
// Engine is. Exports write each file atomically (WriteFileAtomic). A
// channel an import of messages creates is told to the engine's commit
// observer (engine.Options.Observer) as a write is.
//
// ingest imports engine, its leaves (engine/chunk, engine/claudecode,
// engine/redact, engine/search) and vecstore/where only: no store
// (engine/sqlite, engine/postgres), no database/sql, SQLite, bbolt or
// pgx, no net/http, nothing of engine/ops, cmd or bench (arch_test.go).
package ingest
