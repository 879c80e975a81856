package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

// Stats implements engine.Store. Bytes are PostgreSQL's relation
// sizes: Messages is the messages table with its TOAST and indexes, FTS
// the keyword postings, term counts and keyword_stats, Vectors the
// vector sets' tables and the outbox, Sessions the session tables, Total the whole database (the Chroma
// collections and the catalogs too), Other what is left of it.
func (s *Store) Stats(ctx context.Context) (engine.BackendStats, error) {
	st := engine.BackendStats{ByChannel: map[string]int64{}, ByType: map[string]int64{}, ByAgent: map[string]int64{}}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return st, fmt.Errorf("postgres: stats: %w", err)
	}
	defer tx.Rollback(ctx)
	for _, g := range []struct {
		q    string
		into map[string]int64
	}{
		{"SELECT channel_id, count(*) FROM messages GROUP BY channel_id", st.ByChannel},
		{"SELECT message_type, count(*) FROM messages GROUP BY message_type", st.ByType},
		{"SELECT CASE WHEN sender_project_id = '' THEN sender_id ELSE sender_id || '@' || sender_project_id END, count(*) FROM messages GROUP BY 1", st.ByAgent},
	} {
		rows, err := tx.Query(ctx, g.q)
		if err != nil {
			return st, fmt.Errorf("postgres: stats: %w", err)
		}
		var k string
		var n int64
		if _, err := pgx.ForEachRow(rows, []any{&k, &n}, func() error { g.into[k] = n; return nil }); err != nil {
			return st, fmt.Errorf("postgres: stats: %w", err)
		}
	}
	ss := &st.Sessions
	var withContent int64
	if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM session_messages),
		(SELECT count(*) FROM session_contents), (SELECT count(*) FROM session_chunks),
		(SELECT count(*) FROM session_messages WHERE content_hash IS NOT NULL)`).Scan(&ss.Sessions, &ss.Records, &ss.Contents, &ss.Chunks, &withContent); err != nil {
		return st, fmt.Errorf("postgres: stats: %w", err)
	}
	if ss.Contents > 0 {
		ss.DedupRatio = float64(withContent) / float64(ss.Contents)
	}
	b := &st.Bytes
	err = tx.QueryRow(ctx, `SELECT pg_database_size(current_database()),
		pg_total_relation_size('sessions') + pg_total_relation_size('session_messages') + pg_total_relation_size('session_contents')
			+ pg_total_relation_size('session_chunks') + pg_total_relation_size('session_files'),
		pg_total_relation_size('messages'),
		pg_total_relation_size('keyword_postings') + pg_total_relation_size('keyword_terms') + pg_total_relation_size('keyword_stats'),
		pg_total_relation_size('vector_outbox') + coalesce((SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c
			WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace AND c.relname ~ '^vectors_[0-9]+$'), 0)`).
		Scan(&b.Total, &b.Sessions, &b.Messages, &b.FTS, &b.Vectors)
	if err != nil {
		return st, fmt.Errorf("postgres: stats: %w", err)
	}
	b.Other = max(0, b.Total-b.Messages-b.FTS-b.Vectors-b.Sessions)
	return st, nil
}

// TimelineCounts implements engine.Store.
func (s *Store) TimelineCounts(ctx context.Context, start, width, end int64) ([]engine.TimelineCount, error) {
	rows, err := s.pool.Query(ctx, `SELECT channel_type, (created_at - $1) / $2, count(*) FROM messages
		WHERE created_at >= $1 AND created_at < $3 GROUP BY 1, 2`, start, width, end)
	if err != nil {
		return nil, fmt.Errorf("postgres: timeline: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.TimelineCount, error) {
		var c engine.TimelineCount
		err := r.Scan(&c.ChannelType, &c.Bucket, &c.Count)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: timeline: %w", err)
	}
	return out, nil
}
