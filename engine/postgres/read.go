package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/vecstore/where"
)

const messageColumns = `m.id, m.channel_id, m.sender_id, m.sender_project_id, m.content, m.content_hash, m.confidence,
	m.message_type, m.metadata, m.mentions, m.word_count, m.has_breadcrumbs, m.created_at,
	coalesce(m.supersedes, 0), coalesce((SELECT s.id FROM messages s WHERE s.supersedes = m.id), 0)`

func scanMessages(rows pgx.Rows) ([]engine.Message, error) {
	defer rows.Close()
	out := []engine.Message{}
	for rows.Next() {
		var m engine.Message
		var metadata, mentions string
		var created int64
		if err := rows.Scan(&m.ID, &m.ChannelID, &m.SenderID, &m.SenderProjectID, &m.Content, &m.ContentHash, &m.Confidence,
			&m.MessageType, &metadata, &mentions, &m.WordCount, &m.HasBreadcrumbs, &created, &m.Supersedes, &m.SupersededBy); err != nil {
			return nil, err
		}
		m.Metadata = json.RawMessage(metadata)
		if err := json.Unmarshal([]byte(mentions), &m.Mentions); err != nil {
			return nil, fmt.Errorf("%w: message %d mentions: %v", engine.ErrCorrupt, m.ID, err)
		}
		if m.Mentions == nil {
			m.Mentions = []string{}
		}
		m.CreatedAt = time.UnixMilli(created).UTC()
		out = append(out, m)
	}
	return out, rows.Err()
}

// Messages implements engine.Store.
func (s *Store) Messages(ctx context.Context, ids []int64) ([]engine.Message, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+messageColumns+" FROM messages m WHERE m.id = ANY($1)", ids)
	if err != nil {
		return nil, fmt.Errorf("postgres: get messages: %w", err)
	}
	ms, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: get messages: %w", err)
	}
	return ms, nil
}

// RankFacts implements engine.Store with whole messages.
func (s *Store) RankFacts(ctx context.Context, ids []int64) ([]engine.Message, error) {
	return s.Messages(ctx, ids)
}

// listWhere is List by f.Where alone.
func (s *Store) listWhere(ctx context.Context, f engine.Selection, limit int, order engine.ListOrder) ([]engine.Message, error) {
	args := &sqlArgs{}
	cond, err := filterSQL(f.Where, args)
	if err != nil {
		return nil, err
	}
	by := " ORDER BY m.created_at DESC, m.id DESC"
	if order == engine.ListByConfidence {
		by = " ORDER BY m.created_at DESC, m.confidence DESC, m.id DESC"
	}
	q := "SELECT " + messageColumns + " FROM messages m WHERE " + cond + by + " LIMIT " + args.add(limit)
	rows, err := s.pool.Query(ctx, q, args.vals...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list messages: %w", err)
	}
	ms, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: list messages: %w", err)
	}
	return ms, nil
}

// Agents implements engine.Store.
func (s *Store) Agents(ctx context.Context, project string) ([]engine.Agent, error) {
	rows, err := s.pool.Query(ctx, `SELECT name, project_id, description, message_count, created_at, last_active FROM agents
		WHERE $1 = '' OR project_id = $1 ORDER BY name COLLATE "C", project_id COLLATE "C"`, project)
	if err != nil {
		return nil, fmt.Errorf("postgres: agents: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.Agent, error) {
		var a engine.Agent
		var created, last int64
		err := r.Scan(&a.Name, &a.ProjectID, &a.Description, &a.MessageCount, &created, &last)
		a.CreatedAt, a.LastActive = time.UnixMilli(created).UTC(), time.UnixMilli(last).UTC()
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: agents: %w", err)
	}
	return out, nil
}

// After implements engine.Store.
func (s *Store) After(ctx context.Context, after int64, limit int) ([]engine.Message, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+messageColumns+" FROM messages m WHERE m.id > $1 ORDER BY m.id LIMIT $2", after, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: read messages: %w", err)
	}
	ms, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: read messages: %w", err)
	}
	return ms, nil
}

// Count implements engine.Store.
func (s *Store) Count(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, "SELECT coalesce(sum(docs), 0) FROM keyword_stats").Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: count messages: %w", err)
	}
	return n, nil
}

// Channels implements engine.Store.
func (s *Store) Channels(ctx context.Context) ([]engine.Channel, error) {
	return s.channels(ctx, `ORDER BY id COLLATE "C"`)
}

// Channel implements engine.Store.
func (s *Store) Channel(ctx context.Context, id string) (engine.Channel, bool, error) {
	cs, err := s.channels(ctx, "WHERE id = $1", id)
	if err != nil || len(cs) == 0 {
		return engine.Channel{}, false, err
	}
	return cs[0], true, nil
}

// channels returns the channels a clause (WHERE, ORDER BY) selects.
func (s *Store) channels(ctx context.Context, clause string, args ...any) ([]engine.Channel, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, channel_type, name, description, owner_agent_name, owner_agent_project_id, project_id,
		message_count, last_message_at, created_at FROM channels `+clause, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: channels: %w", err)
	}
	defer rows.Close()
	out := []engine.Channel{}
	for rows.Next() {
		var c engine.Channel
		var last, created int64
		if err := rows.Scan(&c.ID, &c.ChannelType, &c.Name, &c.Description, &c.OwnerAgentName, &c.OwnerAgentProjectID, &c.ProjectID,
			&c.MessageCount, &last, &created); err != nil {
			return nil, fmt.Errorf("postgres: channels: %w", err)
		}
		if last != 0 {
			c.LastMessageAt = time.UnixMilli(last).UTC()
		}
		c.CreatedAt = time.UnixMilli(created).UTC()
		out = append(out, c)
	}
	return out, rows.Err()
}

// Senders implements engine.Store.
func (s *Store) Senders(ctx context.Context, names []string) (map[string]bool, error) {
	rows, err := s.pool.Query(ctx, "SELECT DISTINCT lower(name) FROM agents WHERE lower(name) = ANY($1)", names)
	if err != nil {
		return nil, fmt.Errorf("postgres: agents: %w", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: agents: %w", err)
	}
	out := make(map[string]bool, len(got))
	for _, n := range got {
		out[n] = true
	}
	return out, nil
}

// sqlArgs collects a statement's arguments, numbering their placeholders.
type sqlArgs struct{ vals []any }

func (a *sqlArgs) add(v any) string {
	a.vals = append(a.vals, v)
	return fmt.Sprintf("$%d", len(a.vals))
}

// whereColumns maps the where keys to columns of messages aliased m.
var whereColumns = map[string]string{
	"channel_id":      "m.channel_id",
	"channel_type":    "m.channel_type",
	"agent_name":      "m.sender_id",
	"project_id":      "m.sender_project_id",
	"timestamp":       "m.created_at",
	"confidence":      "m.confidence",
	"message_type":    "m.message_type",
	"word_count":      "m.word_count",
	"has_breadcrumbs": "m.has_breadcrumbs",
}

// filterSQL renders a normalized where (nil: none) as a condition over
// messages aliased m. Strings compare by bytes (COLLATE "C"), as SQLite
// and vecstore compare them.
func filterSQL(w *where.Expr, args *sqlArgs) (string, error) {
	if w == nil {
		return "true", nil
	}
	switch w.Op {
	case where.OpAnd, where.OpOr:
		if len(w.Children) == 0 {
			return fmt.Sprint(w.Op == where.OpAnd), nil
		}
		sep := " AND "
		if w.Op == where.OpOr {
			sep = " OR "
		}
		out := "("
		for i, c := range w.Children {
			s, err := filterSQL(c, args)
			if err != nil {
				return "", err
			}
			if i > 0 {
				out += sep
			}
			out += s
		}
		return out + ")", nil
	}
	col, ok := whereColumns[w.Key]
	if !ok {
		return "", &engine.InvalidError{Field: "where", Rule: fmt.Sprintf("unknown metadata key %q", w.Key)}
	}
	val := func(v where.Value) string {
		switch v.Kind {
		case where.KindString:
			return args.add(v.Str) + ` COLLATE "C"`
		case where.KindInt:
			return args.add(v.Int) + "::bigint"
		case where.KindFloat:
			return args.add(v.Float) + "::float8"
		case where.KindBool:
			return args.add(v.Bool)
		}
		return "NULL"
	}
	switch w.Op {
	case where.OpIn, where.OpNin:
		if len(w.Values) == 0 {
			return fmt.Sprint(w.Op == where.OpNin), nil
		}
		out := col + " IN ("
		if w.Op == where.OpNin {
			out = col + " NOT IN ("
		}
		for i, v := range w.Values {
			if i > 0 {
				out += ", "
			}
			out += val(v)
		}
		return out + ")", nil
	}
	ops := map[where.Op]string{where.OpEq: "=", where.OpNe: "<>", where.OpGt: ">", where.OpGte: ">=", where.OpLt: "<", where.OpLte: "<="}
	op, ok := ops[w.Op]
	if !ok {
		return "", &engine.InvalidError{Field: "where", Rule: fmt.Sprintf("unsupported operator %s", w.Op)}
	}
	return col + " " + op + " " + val(w.Value), nil
}
