package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

// Ids come from a sequence outside any transaction, so a message can
// commit after one with a larger id: a reader that listed the larger one
// and moved its cursor past it would never see the smaller. Unread and
// MarkRead therefore first find the horizon: under a SHARE lock on
// messages, which waits for every transaction that is inserting messages
// (they hold ROW EXCLUSIVE from before they take an id) and lets no new
// one start, the sequence's last id. Every id up to the horizon is then
// committed or abandoned, and every id taken later is larger. The lock is
// held for two statements; writers wait that long.

// horizonTx takes the SHARE lock in tx and returns the last id the
// messages' sequence gave (0 for none).
func horizonTx(ctx context.Context, tx pgx.Tx) (int64, error) {
	if _, err := tx.Exec(ctx, "LOCK TABLE messages IN SHARE MODE"); err != nil {
		return 0, err
	}
	var seq string // quoted as needed by PostgreSQL itself
	if err := tx.QueryRow(ctx, "SELECT pg_get_serial_sequence('messages', 'id')").Scan(&seq); err != nil {
		return 0, err
	}
	var last int64
	var called bool
	if err := tx.QueryRow(ctx, "SELECT last_value, is_called FROM "+seq).Scan(&last, &called); err != nil {
		return 0, err
	}
	if !called {
		return 0, nil
	}
	return last, nil
}

// horizon is horizonTx in its own transaction.
func (s *Store) horizon(ctx context.Context) (int64, error) {
	var h int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		h, err = horizonTx(ctx, tx)
		return err
	})
	return h, err
}

// unreadCond is "agent ($1) did not write the message and has not read
// it" over messages aliased m.
const unreadCond = `m.sender_id <> $1 AND m.id > (SELECT coalesce(max(rc.last_read_id), 0) FROM read_cursors rc
	WHERE rc.agent = $1 AND rc.scope IN ('', 'channel:' || m.channel_id,
		'project:' || (SELECT ch.project_id FROM channels ch WHERE ch.id = m.channel_id)))`

// Unread implements engine.Store: the messages up to the horizon,
// read in one snapshot taken after it.
func (s *Store) Unread(ctx context.Context, agent, channel, project string, limit int) ([]engine.Message, int64, error) {
	h, err := s.horizon(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("postgres: unread: %w", err)
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, 0, fmt.Errorf("postgres: unread: %w", err)
	}
	defer tx.Rollback(ctx)
	cond := unreadCond + " AND m.id <= $2"
	args := []any{agent, h}
	switch {
	case channel != "":
		var one int
		err := tx.QueryRow(ctx, "SELECT 1 FROM channels WHERE id = $1", channel).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, 0, fmt.Errorf("channel %q: %w", channel, engine.ErrNotFound)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("postgres: unread: %w", err)
		}
		cond += " AND m.channel_id = $3"
		args = append(args, channel)
	case project != "":
		cond += " AND m.channel_id IN (SELECT id FROM channels WHERE project_id = $3)"
		args = append(args, project)
	}
	var n int64
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM messages m WHERE "+cond, args...).Scan(&n); err != nil {
		return nil, 0, fmt.Errorf("postgres: unread: %w", err)
	}
	rows, err := tx.Query(ctx, "SELECT "+messageColumns+" FROM messages m WHERE "+cond+fmt.Sprintf(" ORDER BY m.id LIMIT %d", limit), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("postgres: unread: %w", err)
	}
	ms, err := scanMessages(rows)
	if err != nil {
		return nil, 0, fmt.Errorf("postgres: unread: %w", err)
	}
	return ms, n, nil
}

// MarkRead implements engine.Store.
func (s *Store) MarkRead(ctx context.Context, agent, scope, channel string, upTo int64, now time.Time) (engine.ReadCursor, error) {
	var cur engine.ReadCursor
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if channel != "" {
			var one int
			err := tx.QueryRow(ctx, "SELECT 1 FROM channels WHERE id = $1", channel).Scan(&one)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("channel %q: %w", channel, engine.ErrNotFound)
			}
			if err != nil {
				return err
			}
		}
		newest, err := horizonTx(ctx, tx)
		if err != nil {
			return err
		}
		to := upTo
		switch {
		case to == 0:
			to = newest
		case to > newest:
			return &engine.InvalidError{Field: "up_to", Rule: fmt.Sprintf("message id %d is not written yet (the newest is %d): a cursor past it would skip messages written later", to, newest)}
		}
		var updated int64
		if err := tx.QueryRow(ctx, `INSERT INTO read_cursors (agent, scope, last_read_id, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (agent, scope) DO UPDATE SET last_read_id = greatest(read_cursors.last_read_id, excluded.last_read_id), updated_at = excluded.updated_at
			RETURNING last_read_id, updated_at`, agent, scope, to, now.UnixMilli()).Scan(&cur.LastReadID, &updated); err != nil {
			return err
		}
		cur.UpdatedAt = time.UnixMilli(updated).UTC()
		return nil
	})
	var inv *engine.InvalidError
	if err != nil && !errors.Is(err, engine.ErrNotFound) && !errors.As(err, &inv) {
		return cur, fmt.Errorf("postgres: mark read: %w", err)
	}
	return cur, err
}

// UnreadAmong implements engine.Store.
func (s *Store) UnreadAmong(ctx context.Context, agent string, ids []int64) (map[int64]bool, error) {
	return s.idsWhere(ctx, "search", "SELECT m.id FROM messages m WHERE m.id = ANY($2) AND "+unreadCond, agent, ids)
}

// idsWhere runs q (arguments args) and returns the ids it selects as a
// set; what names the query in errors.
func (s *Store) idsWhere(ctx context.Context, what, q string, args ...any) (map[int64]bool, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, err)
	}
	out := make(map[int64]bool, len(got))
	for _, id := range got {
		out[id] = true
	}
	return out, nil
}
