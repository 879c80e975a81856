package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Read cursors (migrations/0006_read_cursors.sql): what each agent has
// read, per channel, per project or across everything.
//
// A message is unread by agent A when A did not write it and its id is
// above every cursor of A that covers it: the cursor over everything, the
// one of its channel and the one of its channel's project. Ids are
// assigned by AUTOINCREMENT inside the write transaction, which holds
// SQLite's one write lock (every writer, in every process, begins with
// BEGIN IMMEDIATE), so a message committed later always has a larger id
// than every message committed before it, and ids are never reused. A
// reader that lists the unread messages in one snapshot and marks read up
// to the largest id it saw therefore never passes over a message that was
// being written while it read.

// UnreadRequest asks what is new for an agent. Channel and Project are
// exclusive; neither means every channel.
type UnreadRequest struct {
	Agent   string
	Channel string
	Project string
	// Limit is the number of messages listed (the oldest unread first);
	// 0 means DefaultLimit.
	Limit int
}

// Unread is what an agent has not read yet in a scope.
type Unread struct {
	Agent   string `json:"agent"`
	Channel string `json:"channel,omitempty"`
	Project string `json:"project,omitempty"`
	// Messages are the oldest unread messages, in id order, at most the
	// request's limit.
	Messages []Message `json:"messages"`
	// Count is the number of unread messages in the scope, listed or not.
	Count int64 `json:"unread"`
	// LastID is the id of the last message listed (0 when none): marking
	// read up to it marks exactly what was listed.
	LastID int64 `json:"last_id,omitempty"`
}

// MarkReadRequest moves an agent's cursor of a scope (Channel, Project or
// neither: everything) to UpTo. UpTo 0 means the newest message now.
type MarkReadRequest struct {
	Agent   string
	Channel string
	Project string
	UpTo    int64
}

// ReadCursor is an agent's cursor of one scope after a MarkRead.
type ReadCursor struct {
	Agent   string `json:"agent"`
	Channel string `json:"channel,omitempty"`
	Project string `json:"project,omitempty"`
	// LastReadID is the largest id read in the scope: cursors never move
	// back, so it may be larger than the UpTo asked for.
	LastReadID int64     `json:"last_read_id"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// cursorScope checks an agent and a scope and returns the scope's key in
// read_cursors.
func cursorScope(agent, channel, project string) (string, error) {
	if err := checkAgent("agent", agent); err != nil {
		return "", err
	}
	if err := checkProject("project", project); err != nil {
		return "", err
	}
	switch {
	case channel != "" && project != "":
		return "", invalid("channel/project", "give a channel or a project, not both")
	case channel != "":
		if _, err := parseChannel("channel", channel); err != nil {
			return "", err
		}
		return "channel:" + channel, nil
	case project != "":
		return "project:" + project, nil
	}
	return "", nil
}

// unreadSQL is the condition "agent has not read the message" over the
// messages table aliased alias, with its arguments.
func unreadSQL(alias, agent string) (string, []any) {
	return alias + ".sender_id <> ? AND " + alias + `.id > (SELECT coalesce(max(rc.last_read_id), 0) FROM read_cursors rc
		WHERE rc.agent = ? AND rc.scope IN ('', 'channel:' || ` + alias + `.channel_id,
			'project:' || (SELECT ch.project_id FROM channels ch WHERE ch.id = ` + alias + `.channel_id)))`, []any{agent, agent}
}

// Unread lists the messages in req's scope that req.Agent has not read,
// oldest first, and counts them. It reads one snapshot and writes nothing.
// An unknown channel is ErrNotFound.
func (e *Engine) Unread(ctx context.Context, req UnreadRequest) (Unread, error) {
	scope, err := cursorScope(req.Agent, req.Channel, req.Project)
	if err != nil {
		return Unread{}, err
	}
	limit, err := checkLimit(req.Limit, DefaultLimit)
	if err != nil {
		return Unread{}, err
	}
	if e.bs != nil {
		return e.backendUnread(ctx, req, limit)
	}
	done, err := e.enter()
	if err != nil {
		return Unread{}, err
	}
	defer done()
	tx, err := e.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Unread{}, fmt.Errorf("engine: unread: %w", classify(err))
	}
	defer tx.Rollback()
	// The lower bound every message of the scope is above: the cursors
	// that cover all of it. It lets SQLite start at that id.
	bounds := []string{""}
	var scopeCond string
	var scopeArgs []any
	switch {
	case req.Channel != "":
		var project string
		err := tx.QueryRowContext(ctx, "SELECT project_id FROM channels WHERE id = ?", req.Channel).Scan(&project)
		if errors.Is(err, sql.ErrNoRows) {
			return Unread{}, fmt.Errorf("channel %q: %w", req.Channel, ErrNotFound)
		}
		if err != nil {
			return Unread{}, fmt.Errorf("engine: unread: %w", classify(err))
		}
		bounds = append(bounds, scope)
		if project != "" {
			bounds = append(bounds, "project:"+project)
		}
		scopeCond, scopeArgs = " AND m.channel_id = ?", []any{req.Channel}
	case req.Project != "":
		bounds = append(bounds, scope)
		scopeCond, scopeArgs = " AND m.channel_id IN (SELECT id FROM channels WHERE project_id = ?)", []any{req.Project}
	}
	var floor int64
	err = tx.QueryRowContext(ctx, "SELECT coalesce(max(last_read_id), 0) FROM read_cursors WHERE agent = ? AND scope IN ("+placeholders(len(bounds))+")",
		append([]any{req.Agent}, stringArgs(bounds)...)...).Scan(&floor)
	if err != nil {
		return Unread{}, fmt.Errorf("engine: unread: %w", classify(err))
	}
	above, err := e.cursorsAboveTx(ctx, tx, req.Agent, floor)
	if err != nil {
		return Unread{}, err
	}
	cond := "m.id > ? AND m.sender_id <> ?" + scopeCond
	args := append([]any{floor, req.Agent}, scopeArgs...)
	if len(above) > maxCursorTerms {
		c, a := unreadSQL("m", req.Agent)
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

	out := Unread{Agent: req.Agent, Channel: req.Channel, Project: req.Project, Messages: []Message{}}
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM messages m WHERE "+cond, args...).Scan(&out.Count); err != nil {
		return Unread{}, fmt.Errorf("engine: unread: %w", classify(err))
	}
	rows, err := tx.QueryContext(ctx, "SELECT "+messageColumns+" FROM messages m WHERE "+cond+" ORDER BY m.id LIMIT ?", append(args, limit)...)
	if err != nil {
		return Unread{}, fmt.Errorf("engine: unread: %w", classify(err))
	}
	defer rows.Close()
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return Unread{}, fmt.Errorf("engine: unread: %w", classify(err))
		}
		out.Messages = append(out.Messages, m)
		out.LastID = m.ID
	}
	if err := rows.Err(); err != nil {
		return Unread{}, fmt.Errorf("engine: unread: %w", classify(err))
	}
	return out, nil
}

// MarkRead marks every message of req's scope up to req.UpTo as read by
// req.Agent. Cursors only move forward (a smaller UpTo leaves the cursor
// where it is), and UpTo may not be above the newest message id: such a
// cursor would pass over messages not written yet. The move is one
// statement in a write transaction, so processes marking at once never
// lose a move.
func (e *Engine) MarkRead(ctx context.Context, req MarkReadRequest) (ReadCursor, error) {
	scope, err := cursorScope(req.Agent, req.Channel, req.Project)
	if err != nil {
		return ReadCursor{}, err
	}
	if req.UpTo < 0 {
		return ReadCursor{}, invalid("up_to", "must be a message id (0 means the newest), got %d", req.UpTo)
	}
	if e.bs != nil {
		return e.backendMarkRead(ctx, req, scope)
	}
	done, err := e.enter()
	if err != nil {
		return ReadCursor{}, err
	}
	defer done()
	tx, err := e.w.BeginTx(ctx, nil)
	if err != nil {
		return ReadCursor{}, fmt.Errorf("engine: mark read: %w", classify(err))
	}
	defer tx.Rollback()
	if req.Channel != "" {
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM channels WHERE id = ?", req.Channel).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return ReadCursor{}, fmt.Errorf("channel %q: %w", req.Channel, ErrNotFound)
		}
		if err != nil {
			return ReadCursor{}, fmt.Errorf("engine: mark read: %w", classify(err))
		}
	}
	// The largest id ever assigned (deleted messages included): under the
	// write lock no larger id can be committed before this transaction.
	var newest int64
	if err := tx.QueryRowContext(ctx, "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'messages'), 0)").Scan(&newest); err != nil {
		return ReadCursor{}, fmt.Errorf("engine: mark read: %w", classify(err))
	}
	upTo := req.UpTo
	switch {
	case upTo == 0:
		upTo = newest
	case upTo > newest:
		return ReadCursor{}, invalid("up_to", "message id %d is not written yet (the newest is %d): a cursor past it would skip messages written later", upTo, newest)
	}
	now := e.opts.Now().UnixMilli()
	cur := ReadCursor{Agent: req.Agent, Channel: req.Channel, Project: req.Project}
	var updated int64
	err = tx.QueryRowContext(ctx, `INSERT INTO read_cursors (agent, scope, last_read_id, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (agent, scope) DO UPDATE SET last_read_id = max(last_read_id, excluded.last_read_id), updated_at = excluded.updated_at
		RETURNING last_read_id, updated_at`, req.Agent, scope, upTo, now).Scan(&cur.LastReadID, &updated)
	if err != nil {
		return ReadCursor{}, fmt.Errorf("engine: mark read: %w", classify(err))
	}
	if err := tx.Commit(); err != nil {
		return ReadCursor{}, fmt.Errorf("engine: mark read: %w", classify(err))
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
func (e *Engine) cursorsAboveTx(ctx context.Context, tx *sql.Tx, agent string, floor int64) ([]cursorRow, error) {
	rows, err := tx.QueryContext(ctx, "SELECT scope, last_read_id FROM read_cursors WHERE agent = ? AND last_read_id > ? ORDER BY scope", agent, floor)
	if err != nil {
		return nil, fmt.Errorf("engine: unread: %w", classify(err))
	}
	defer rows.Close()
	var out []cursorRow
	for rows.Next() {
		var c cursorRow
		if err := rows.Scan(&c.scope, &c.id); err != nil {
			return nil, fmt.Errorf("engine: unread: %w", classify(err))
		}
		out = append(out, c)
	}
	return out, classify(rows.Err())
}

// unreadAmong returns which of ids agent has not read (the semantic side
// of a search restricted to unread messages, whose vector metadata cannot
// say).
func (e *Engine) unreadAmong(ctx context.Context, agent string, ids []int64) (map[int64]bool, error) {
	out := make(map[int64]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	cond, args := unreadSQL("m", agent)
	rows, err := e.r.QueryContext(ctx, "SELECT m.id FROM messages m WHERE m.id IN ("+placeholders(len(ids))+") AND "+cond,
		append(int64Args(ids), args...)...)
	if err != nil {
		return nil, fmt.Errorf("engine: search: %w", classify(err))
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("engine: search: %w", classify(err))
		}
		out[id] = true
	}
	return out, classify(rows.Err())
}

func stringArgs(ss []string) []any {
	args := make([]any, len(ss))
	for i, s := range ss {
		args[i] = s
	}
	return args
}
