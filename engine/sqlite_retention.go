package engine

import (
	"context"
	"fmt"
	"maps"
)

// The embedded store's retention steps (GC, Purge, gc.max_bytes) as the
// Store port names them. Retention's own GC and Purge on a data dir run
// the same statements inline (engine/retention.go, purge.go).

func (s *sqliteStore) RetentionRows(ctx context.Context) ([]RetentionRow, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, channel_id, message_type, confidence, created_at,
			coalesce(json_extract(metadata, '$.pinned') IN (1, 'true'), 0)
		FROM messages ORDER BY channel_id, confidence DESC, created_at DESC, id DESC`)
	if err != nil {
		return nil, fmt.Errorf("engine: gc: %w", classify(err))
	}
	defer rows.Close()
	var out []RetentionRow
	for rows.Next() {
		var r RetentionRow
		var created int64
		if err := rows.Scan(&r.ID, &r.Channel, &r.Type, &r.Confidence, &created, &r.Pinned); err != nil {
			return nil, classify(err)
		}
		r.CreatedAt = fromMillis(created)
		out = append(out, r)
	}
	return out, classify(rows.Err())
}

func (s *sqliteStore) MessageIDsOf(ctx context.Context, channel, agent string) ([]int64, bool, error) {
	known, q, arg := "SELECT count(*) FROM agents WHERE name = ?", "SELECT id FROM messages WHERE sender_id = ? ORDER BY id", agent
	if channel != "" {
		known, q, arg = "SELECT count(*) FROM channels WHERE id = ?", "SELECT id FROM messages WHERE channel_id = ? ORDER BY id", channel
	}
	var n int
	if err := s.r.QueryRowContext(ctx, known, arg).Scan(&n); err != nil {
		return nil, false, fmt.Errorf("engine: purge: %w", classify(err))
	}
	if n == 0 {
		return nil, false, nil
	}
	ids, err := queryIDs(ctx, s.r, q, arg)
	return ids, true, err
}

// DeleteMessages deletes in one transaction (deleteMessagesTx), wakes the
// worker for the vectors' deletions and scrubs the WAL.
func (s *sqliteStore) DeleteMessages(ctx context.Context, ids []int64, dropChannel string) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("engine: delete messages: %w", classify(err))
	}
	defer tx.Rollback()
	if err := s.msgs.deleteMessagesTx(ctx, tx, ids); err != nil {
		return err
	}
	if dropChannel != "" {
		if _, err := tx.ExecContext(ctx, "DELETE FROM channels WHERE id = ? AND NOT EXISTS (SELECT 1 FROM messages WHERE channel_id = ?)", dropChannel, dropChannel); err != nil {
			return fmt.Errorf("engine: purge: delete channel: %w", classify(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("engine: delete messages: %w", classify(err))
	}
	s.wakeVectors()
	return s.scrubDeleted(ctx)
}

// Vectors reads the set's vectors from vecstore, 1,000 ids at a time.
func (s *sqliteStore) Vectors(ctx context.Context, set int64, ids []int64) (map[int64][]float32, error) {
	out := map[int64][]float32{}
	if len(ids) == 0 || s.vec == nil || s.vec.store == nil {
		return out, nil
	}
	vs, err := s.getSet(ctx, set)
	if err != nil {
		return nil, err
	}
	const batch = 1000
	for start := 0; start < len(ids); start += batch {
		got, err := s.vectorsOf(ctx, vs, ids[start:min(start+batch, len(ids))])
		if err != nil {
			return nil, fmt.Errorf("engine: gc: %w", err)
		}
		maps.Copy(out, got)
	}
	return out, nil
}

// Reclaim merges the FTS5 segments, VACUUMs and truncates the WAL
// (Retention.reclaim).
func (s *sqliteStore) Reclaim(ctx context.Context) error {
	return (&Retention{db: s.db, fts: s.fts}).reclaim(ctx)
}

// Size is the size of every file in the data dir.
func (s *sqliteStore) Size(ctx context.Context) (int64, error) {
	return (&Retention{db: s.db}).diskBytes(), nil
}

func (s *sqliteStore) QuotaSessions(ctx context.Context) ([]QuotaSession, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT s.id, s.last_at, coalesce((SELECT sum(length(c.content)) FROM session_contents c
		WHERE c.hash IN (SELECT content_hash FROM session_messages WHERE session_id = s.id)), 0) FROM sessions s ORDER BY s.last_at, s.id`)
	if err != nil {
		return nil, fmt.Errorf("engine: gc: %w", classify(err))
	}
	defer rows.Close()
	var out []QuotaSession
	for rows.Next() {
		var q QuotaSession
		var last int64
		if err := rows.Scan(&q.ID, &last, &q.Length); err != nil {
			return nil, classify(err)
		}
		q.LastAt = fromMillis(last)
		out = append(out, q)
	}
	return out, classify(rows.Err())
}

func (s *sqliteStore) QuotaMessages(ctx context.Context) ([]QuotaMessage, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, channel_id, message_type, confidence, created_at, length(content) + length(metadata) FROM messages
		WHERE message_type NOT IN ('decision', 'policy') AND NOT coalesce(json_extract(metadata, '$.pinned') IN (1, 'true'), 0)
		ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("engine: gc: %w", classify(err))
	}
	defer rows.Close()
	var out []QuotaMessage
	for rows.Next() {
		var q QuotaMessage
		var created int64
		if err := rows.Scan(&q.ID, &q.Channel, &q.Type, &q.Confidence, &created, &q.Length); err != nil {
			return nil, classify(err)
		}
		q.CreatedAt = fromMillis(created)
		out = append(out, q)
	}
	return out, classify(rows.Err())
}

// Compact is Reclaim: VACUUM gives the file its deleted pages back.
func (s *sqliteStore) Compact(ctx context.Context) error { return s.Reclaim(ctx) }
