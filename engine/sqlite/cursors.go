package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
	"strings"
	"time"
)

// The embedded store's read cursors (table read_cursors).

// unreadSQL is the condition "agent has not read the message" over the
// messages table aliased alias, with its arguments.
func unreadSQL(alias, agent string) (string, []any) {
	return alias + ".sender_id <> ? AND " + alias + `.id > (SELECT coalesce(max(rc.last_read_id), 0) FROM read_cursors rc
		WHERE rc.agent = ? AND rc.scope IN ('', 'channel:' || ` + alias + `.channel_id,
			'project:' || (SELECT ch.project_id FROM channels ch WHERE ch.id = ` + alias + `.channel_id)))`, []any{agent, agent}
}

func (s *Store) Unread(ctx context.Context, agent, channel, project string, limit int) ([]engine.Message, int64, error) {
	scope, err := engine.CursorScope(agent, channel, project)
	if err != nil {
		return nil, 0, err
	}
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, fmt.Errorf("engine: unread: %w", classify(err))
	}
	defer tx.Rollback()
	// The lower bound every message of the scope is above: the cursors
	// that cover all of it. It lets SQLite start at that id.
	bounds := []string{""}
	var scopeCond string
	var scopeArgs []any
	switch {
	case channel != "":
		var project string
		err := tx.QueryRowContext(ctx, "SELECT project_id FROM channels WHERE id = ?", channel).Scan(&project)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, 0, fmt.Errorf("channel %q: %w", channel, engine.ErrNotFound)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("engine: unread: %w", classify(err))
		}
		bounds = append(bounds, scope)
		if project != "" {
			bounds = append(bounds, "project:"+project)
		}
		scopeCond, scopeArgs = " AND m.channel_id = ?", []any{channel}
	case project != "":
		bounds = append(bounds, scope)
		scopeCond, scopeArgs = " AND m.channel_id IN (SELECT id FROM channels WHERE project_id = ?)", []any{project}
	}
	var floor int64
	err = tx.QueryRowContext(ctx, "SELECT coalesce(max(last_read_id), 0) FROM read_cursors WHERE agent = ? AND scope IN ("+placeholders(len(bounds))+")",
		append([]any{agent}, stringArgs(bounds)...)...).Scan(&floor)
	if err != nil {
		return nil, 0, fmt.Errorf("engine: unread: %w", classify(err))
	}
	above, err := s.cursorsAboveTx(ctx, tx, agent, floor)
	if err != nil {
		return nil, 0, err
	}
	cond := "m.id > ? AND m.sender_id <> ?" + scopeCond
	args := append([]any{floor, agent}, scopeArgs...)
	if len(above) > maxCursorTerms {
		c, a := unreadSQL("m", agent)
		cond, args = cond+" AND "+c, append(args, a...)
	} else {
		// The channel and project cursors above the floor, one term each:
		// the few an agent has cost less than a lookup per message.
		for _, c := range above {
			if ch, ok := strings.CutPrefix(c.scope, "channel:"); ok {
				cond += " AND NOT (m.channel_id = ? AND m.id <= ?)"
				args = append(args, ch, c.id)
			} else if p, ok := strings.CutPrefix(c.scope, "project:"); ok {
				cond += " AND NOT (m.id <= ? AND m.channel_id IN (SELECT id FROM channels WHERE project_id = ?))"
				args = append(args, c.id, p)
			}
		}
	}

	var count int64
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM messages m WHERE "+cond, args...).Scan(&count); err != nil {
		return nil, 0, fmt.Errorf("engine: unread: %w", classify(err))
	}
	rows, err := tx.QueryContext(ctx, "SELECT "+messageColumns+" FROM messages m WHERE "+cond+" ORDER BY m.id LIMIT ?", append(args, limit)...)
	if err != nil {
		return nil, 0, fmt.Errorf("engine: unread: %w", classify(err))
	}
	defer rows.Close()
	out := []engine.Message{}
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("engine: unread: %w", classify(err))
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("engine: unread: %w", classify(err))
	}
	return out, count, nil
}

func (s *Store) MarkRead(ctx context.Context, agent, scope, channel string, upTo int64, now time.Time) (engine.ReadCursor, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return engine.ReadCursor{}, fmt.Errorf("engine: mark read: %w", classify(err))
	}
	defer tx.Rollback()
	if channel != "" {
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM channels WHERE id = ?", channel).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return engine.ReadCursor{}, fmt.Errorf("channel %q: %w", channel, engine.ErrNotFound)
		}
		if err != nil {
			return engine.ReadCursor{}, fmt.Errorf("engine: mark read: %w", classify(err))
		}
	}
	// The largest id ever assigned (deleted messages included): under the
	// write lock no larger id can be committed before this transaction.
	var newest int64
	if err := tx.QueryRowContext(ctx, "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'messages'), 0)").Scan(&newest); err != nil {
		return engine.ReadCursor{}, fmt.Errorf("engine: mark read: %w", classify(err))
	}
	switch {
	case upTo == 0:
		upTo = newest
	case upTo > newest:
		return engine.ReadCursor{}, invalid("up_to", "message id %d is not written yet (the newest is %d): a cursor past it would skip messages written later", upTo, newest)
	}
	var cur engine.ReadCursor
	var updated int64
	err = tx.QueryRowContext(ctx, `INSERT INTO read_cursors (agent, scope, last_read_id, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (agent, scope) DO UPDATE SET last_read_id = max(last_read_id, excluded.last_read_id), updated_at = excluded.updated_at
		RETURNING last_read_id, updated_at`, agent, scope, upTo, now.UnixMilli()).Scan(&cur.LastReadID, &updated)
	if err != nil {
		return engine.ReadCursor{}, fmt.Errorf("engine: mark read: %w", classify(err))
	}
	if err := tx.Commit(); err != nil {
		return engine.ReadCursor{}, fmt.Errorf("engine: mark read: %w", classify(err))
	}
	cur.UpdatedAt = fromMillis(updated)
	return cur, nil
}

// maxCursorTerms is the most cursors Unread writes into its query as
// terms; beyond it a per-message lookup of the cursors is cheaper to plan.
const maxCursorTerms = 64

type cursorRow struct {
	scope string
	id    int64
}

// cursorsAboveTx returns agent's cursors above floor.
func (s *Store) cursorsAboveTx(ctx context.Context, tx *sql.Tx, agent string, floor int64) ([]cursorRow, error) {
	return queryAll(ctx, tx, "unread", "SELECT scope, last_read_id FROM read_cursors WHERE agent = ? AND last_read_id > ? ORDER BY scope", []any{agent, floor},
		func(rows *sql.Rows) (c cursorRow, err error) {
			err = rows.Scan(&c.scope, &c.id)
			return c, err
		})
}

// UnreadAmong returns which of ids agent has not read (the semantic side
// of a search restricted to unread messages, whose vector metadata cannot
// say).
func (s *Store) UnreadAmong(ctx context.Context, agent string, ids []int64) (map[int64]bool, error) {
	if len(ids) == 0 {
		return map[int64]bool{}, nil
	}
	cond, args := unreadSQL("m", agent)
	return querySet[int64](ctx, s.r, "search", "SELECT m.id FROM messages m WHERE m.id IN ("+placeholders(len(ids))+") AND "+cond,
		append(int64Args(ids), args...)...)
}
