package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

// engine.Store on PostgreSQL. The size gc.max_bytes compares
// (Store.Size) is the sum of pg_total_relation_size — heap,
// TOAST, every index, free space and visibility maps — of the tables
// cairn's migrations create in the store's schema (cairnTables and every
// vectors_N): not the Chroma collections' tables (chroma_*), PostgreSQL's
// catalogs, the WAL, or anything else in the database.

// cairnTables are the tables of this store's migrations besides the
// vector sets' vectors_N.
var cairnTables = []string{
	"cairn_format", "channels", "agents", "messages", "keyword_stats", "keyword_terms", "keyword_postings", "search_stats",
	"vector_sets", "vector_outbox", "read_cursors", "breadcrumb_marks",
	"sessions", "session_contents", "session_messages", "session_chunks", "session_files",
}

// pinnedSQL is whether a message is pinned (metadata "pinned" true, 1 or
// "true"), which retention never deletes unless a policy says so.
const pinnedSQL = `coalesce(metadata::jsonb -> 'pinned' IN ('true'::jsonb, '1'::jsonb, '"true"'::jsonb), false)`

// cairnTablesSQL selects the oid of every table of the store.
const cairnTablesSQL = `SELECT c.oid FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace
	AND (c.relname = ANY($1) OR c.relname ~ '^vectors_[0-9]+$')`

// size is the bytes of the store's tables (see the top of this file).
func (s *Store) size(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(oid)), 0)::bigint FROM (`+cairnTablesSQL+`) t`, cairnTables).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: size: %w", err)
	}
	return n, nil
}

// QuotaSessions implements engine.Store.
func (s *Store) QuotaSessions(ctx context.Context) ([]engine.QuotaSession, error) {
	rows, err := s.pool.Query(ctx, `SELECT s.id, s.last_at, coalesce((SELECT sum(length(c.content)) FROM session_contents c
		WHERE c.hash IN (SELECT content_hash FROM session_messages WHERE session_id = s.id)), 0)::bigint
		FROM sessions s ORDER BY s.last_at, s.id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("postgres: quota sessions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.QuotaSession, error) {
		var q engine.QuotaSession
		var last int64
		err := r.Scan(&q.ID, &last, &q.Length)
		q.LastAt = millis(last)
		return q, err
	})
	return out, wrapErr("quota sessions", err)
}

// QuotaMessages implements engine.Store.
func (s *Store) QuotaMessages(ctx context.Context) ([]engine.QuotaMessage, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, channel_id, message_type, confidence, created_at, (length(content) + length(metadata))::bigint
		FROM messages WHERE message_type NOT IN ('decision', 'policy') AND NOT `+pinnedSQL+`
		ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: quota messages: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.QuotaMessage, error) {
		var q engine.QuotaMessage
		var created int64
		err := r.Scan(&q.ID, &q.Channel, &q.Type, &q.Confidence, &created, &q.Length)
		q.CreatedAt = time.UnixMilli(created).UTC()
		return q, err
	})
	return out, wrapErr("quota messages", err)
}

// Compact implements engine.Store: VACUUM FULL of every table of the
// store, which rewrites each without its deleted rows and gives the space
// back to the system. Each table is locked while it is rewritten: other
// processes' reads and writes of it wait.
func (s *Store) Compact(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, `SELECT quote_ident(relname) FROM pg_class WHERE oid IN (`+cairnTablesSQL+`) ORDER BY relname`, cairnTables)
	if err != nil {
		return fmt.Errorf("postgres: compact: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("postgres: compact: %w", err)
	}
	for _, n := range names {
		if _, err := s.pool.Exec(ctx, "VACUUM (FULL, ANALYZE) "+n); err != nil {
			return fmt.Errorf("postgres: compact %s: %w", n, err)
		}
	}
	return nil
}
