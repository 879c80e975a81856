package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

// RetentionRows implements engine.Store.
func (s *Store) RetentionRows(ctx context.Context) ([]engine.RetentionRow, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, channel_id, message_type, confidence, created_at, `+pinnedSQL+`
		FROM messages ORDER BY channel_id COLLATE "C", confidence DESC, created_at DESC, id DESC`)
	if err != nil {
		return nil, fmt.Errorf("postgres: gc: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.RetentionRow, error) {
		var m engine.RetentionRow
		var created int64
		err := r.Scan(&m.ID, &m.Channel, &m.Type, &m.Confidence, &created, &m.Pinned)
		m.CreatedAt = time.UnixMilli(created).UTC()
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: gc: %w", err)
	}
	return out, nil
}

// MessageIDsOf implements engine.Store.
func (s *Store) MessageIDsOf(ctx context.Context, channel, agent string) ([]int64, bool, error) {
	exists, byID := "SELECT EXISTS (SELECT 1 FROM agents WHERE name = $1)", "SELECT id FROM messages WHERE sender_id = $1 ORDER BY id"
	key := agent
	if channel != "" {
		exists, byID, key = "SELECT EXISTS (SELECT 1 FROM channels WHERE id = $1)", "SELECT id FROM messages WHERE channel_id = $1 ORDER BY id", channel
	}
	var found bool
	if err := s.pool.QueryRow(ctx, exists, key).Scan(&found); err != nil || !found {
		return nil, false, err
	}
	rows, err := s.pool.Query(ctx, byID, key)
	if err != nil {
		return nil, false, fmt.Errorf("postgres: purge: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, false, fmt.Errorf("postgres: purge: %w", err)
	}
	return ids, true, nil
}

// DeleteMessages implements engine.Store. Vectors, outbox rows and
// marks go with their messages (ON DELETE CASCADE).
func (s *Store) DeleteMessages(ctx context.Context, ids []int64, dropChannel string) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := deleteMessagesTx(ctx, tx, ids); err != nil {
			return err
		}
		if dropChannel != "" {
			_, err := tx.Exec(ctx, "DELETE FROM channels WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM messages WHERE channel_id = $1)", dropChannel)
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: delete messages: %w", err)
	}
	return nil
}

// deleteMessagesTx deletes the messages among ids that exist in tx and
// keeps the channel, agent and BM25 counters right.
func deleteMessagesTx(ctx context.Context, tx pgx.Tx, ids []int64) error {
	rows, err := tx.Query(ctx, `WITH gone AS (DELETE FROM messages WHERE id = ANY($1)
			RETURNING channel_id, sender_id, sender_project_id, doc_len)
		SELECT channel_id, sender_id, sender_project_id, count(*), sum(doc_len) FROM gone
		GROUP BY channel_id, sender_id, sender_project_id ORDER BY 1, 2, 3`, ids)
	if err != nil {
		return err
	}
	type agentKey struct{ name, project string }
	channels, agents := map[string]int64{}, map[agentKey]int64{}
	var chOrder []string
	var agOrder []agentKey
	var docs, tokens int64
	var ch, sender, project string
	var n, toks int64
	if _, err := pgx.ForEachRow(rows, []any{&ch, &sender, &project, &n, &toks}, func() error {
		if _, ok := channels[ch]; !ok {
			chOrder = append(chOrder, ch)
		}
		channels[ch] += n
		k := agentKey{sender, project}
		if _, ok := agents[k]; !ok {
			agOrder = append(agOrder, k)
		}
		agents[k] += n
		docs, tokens = docs+n, tokens+toks
		return nil
	}); err != nil {
		return err
	}
	for _, ch := range chOrder {
		if _, err := tx.Exec(ctx, `UPDATE channels SET message_count = message_count - $1,
			last_message_at = coalesce((SELECT max(created_at) FROM messages WHERE channel_id = $2), 0) WHERE id = $2`, channels[ch], ch); err != nil {
			return err
		}
	}
	for _, a := range agOrder {
		if _, err := tx.Exec(ctx, "UPDATE agents SET message_count = greatest(message_count - $1, 0) WHERE name = $2 AND project_id = $3",
			agents[a], a.name, a.project); err != nil {
			return err
		}
	}
	if docs > 0 {
		if _, err := tx.Exec(ctx, "UPDATE keyword_stats SET docs = docs - $1, tokens = tokens - $2 WHERE shard = $3", docs, tokens, rand.IntN(16)); err != nil {
			return err
		}
	}
	return nil
}

// Vectors implements engine.Store.
func (s *Store) Vectors(ctx context.Context, set int64, ids []int64) (map[int64][]float32, error) {
	rows, err := s.pool.Query(ctx, "SELECT message_id, embedding::real[] FROM "+vectorTable(set)+" WHERE message_id = ANY($1)", ids)
	if err != nil {
		return nil, fmt.Errorf("postgres: vectors: %w", err)
	}
	out := make(map[int64][]float32, len(ids))
	var id int64
	var v []float32
	if _, err := pgx.ForEachRow(rows, []any{&id, &v}, func() error { out[id] = v; v = nil; return nil }); err != nil {
		return nil, fmt.Errorf("postgres: vectors: %w", err)
	}
	return out, nil
}

// Reclaim implements engine.Store: VACUUM of the tables deletes
// touch, so their dead rows' space is reused. The text of deleted rows
// stays in free space and in the write-ahead log until PostgreSQL reuses
// or recycles them (VACUUM FULL rewrites a table; that is the operator's
// choice, as it locks the table).
func (s *Store) Reclaim(ctx context.Context) error {
	if _, err := s.pool.Exec(ctx, "VACUUM messages, channels, agents, keyword_stats, vector_outbox, breadcrumb_marks"); err != nil {
		return fmt.Errorf("postgres: vacuum: %w", err)
	}
	return nil
}

// Size implements engine.Store: the bytes of the store's tables
// (ops_quota.go says which).
func (s *Store) Size(ctx context.Context) (int64, error) { return s.size(ctx) }
