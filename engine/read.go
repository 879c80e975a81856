package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/vecstore/where"
)

// MaxLimit is the largest limit a listing or search accepts.
const MaxLimit = 10000

const messageColumns = `m.id, m.channel_id, m.sender_id, m.sender_project_id, m.content, m.content_hash, m.confidence,
	m.message_type, m.metadata, m.mentions, m.word_count, m.has_breadcrumbs, m.created_at,
	coalesce(m.supersedes, 0), coalesce((SELECT s.id FROM messages s WHERE s.supersedes = m.id), 0)`

type rowScanner interface{ Scan(dest ...any) error }

func scanMessage(s rowScanner) (Message, error) {
	var m Message
	var metadata, mentions string
	var created int64
	err := s.Scan(&m.ID, &m.ChannelID, &m.SenderID, &m.SenderProjectID, &m.Content, &m.ContentHash, &m.Confidence,
		&m.MessageType, &metadata, &mentions, &m.WordCount, &m.HasBreadcrumbs, &created, &m.Supersedes, &m.SupersededBy)
	if err != nil {
		return m, err
	}
	m.Metadata = json.RawMessage(metadata)
	if err := json.Unmarshal([]byte(mentions), &m.Mentions); err != nil {
		return m, fmt.Errorf("%w: message %d mentions: %v", ErrCorrupt, m.ID, err)
	}
	if m.Mentions == nil {
		m.Mentions = []string{}
	}
	m.CreatedAt = fromMillis(created)
	return m, nil
}

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func queryMessages(ctx context.Context, db *sql.DB, query string, args ...any) ([]Message, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	out := []Message{}
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, classify(err)
		}
		out = append(out, m)
	}
	return out, classify(rows.Err())
}

// checkLimit validates a limit field; 0 means def.
func checkLimit(limit, def int) (int, error) {
	if limit < 0 || limit > MaxLimit {
		return 0, invalid("limit", "must be from 1 to %d (0 means the default), got %d", MaxLimit, limit)
	}
	if limit == 0 {
		return def, nil
	}
	return limit, nil
}

// GetMessage returns the message with id, or an error wrapping ErrNotFound.
func (e *Engine) GetMessage(ctx context.Context, id int64) (Message, error) {
	if id <= 0 {
		return Message{}, invalid("id", "must be a positive integer, got %d", id)
	}
	done, err := e.enterStore()
	if err != nil {
		return Message{}, err
	}
	defer done()
	ms, err := e.store.Messages(ctx, []int64{id})
	if err != nil {
		return Message{}, err
	}
	if len(ms) == 0 {
		return Message{}, fmt.Errorf("message id %d: %w", id, ErrNotFound)
	}
	m := ms[0]
	if err := e.attachChecks(ctx, []*Message{&m}); err != nil {
		return Message{}, err
	}
	return m, nil
}

// GetMessages returns the messages with the given ids that exist, in the
// order of ids.
func (e *Engine) GetMessages(ctx context.Context, ids []int64) ([]Message, error) {
	done, err := e.enterStore()
	if err != nil {
		return nil, err
	}
	defer done()
	if len(ids) == 0 {
		return []Message{}, nil
	}
	ms, err := e.store.Messages(ctx, ids)
	if err != nil {
		return nil, err
	}
	return inOrder(ids, ms), nil
}

func (e *Engine) getMessages(ctx context.Context, ids []int64) ([]Message, error) {
	if len(ids) == 0 {
		return []Message{}, nil
	}
	ms, err := queryMessages(ctx, e.r, "SELECT "+messageColumns+" FROM messages m WHERE m.id IN ("+placeholders(len(ids))+")", int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("engine: get messages: %w", err)
	}
	return inOrder(ids, ms), nil
}

// rankFacts reads what ranking needs of each message in ids (id,
// sender_id, confidence, created_at, superseded_by), in the order of ids;
// missing ids are skipped.
func (e *Engine) rankFacts(ctx context.Context, ids []int64) ([]Message, error) {
	if len(ids) == 0 {
		return []Message{}, nil
	}
	rows, err := e.r.QueryContext(ctx, "SELECT m.id, m.sender_id, m.confidence, m.created_at, coalesce((SELECT s.id FROM messages s WHERE s.supersedes = m.id), 0) FROM messages m WHERE m.id IN ("+placeholders(len(ids))+")", int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("engine: get messages: %w", classify(err))
	}
	defer rows.Close()
	var ms []Message
	for rows.Next() {
		var m Message
		var created int64
		if err := rows.Scan(&m.ID, &m.SenderID, &m.Confidence, &created, &m.SupersededBy); err != nil {
			return nil, fmt.Errorf("engine: get messages: %w", classify(err))
		}
		m.CreatedAt = fromMillis(created)
		ms = append(ms, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("engine: get messages: %w", classify(err))
	}
	return inOrder(ids, ms), nil
}

// int64Args returns ids as query arguments.
func int64Args(ids []int64) []any {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return args
}

// inOrder returns ms in the order of ids; ids without a message are skipped.
func inOrder(ids []int64, ms []Message) []Message {
	byID := make(map[int64]Message, len(ms))
	for _, m := range ms {
		byID[m.ID] = m
	}
	out := make([]Message, 0, len(ms))
	for _, id := range ids {
		if m, ok := byID[id]; ok {
			out = append(out, m)
		}
	}
	return out
}

func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?,", n-1) + "?"
}

// DefaultLimit is the number of messages a listing returns when limit is 0.
const DefaultLimit = 50

// GetAgentNotes returns agent's notes, newest first: with project "" from
// all of the agent's notes channels, otherwise from
// agent-notes:{agent}:{project} only. limit 0 means DefaultLimit. An agent
// without notes has an empty list.
func (e *Engine) GetAgentNotes(ctx context.Context, agent, project string, limit int) ([]Message, error) {
	if err := checkAgent("agent", agent); err != nil {
		return nil, err
	}
	if err := checkProject("project", project); err != nil {
		return nil, err
	}
	limit, err := checkLimit(limit, DefaultLimit)
	if err != nil {
		return nil, err
	}
	done, err := e.enterStore()
	if err != nil {
		return nil, err
	}
	defer done()
	var chans []where.Value
	if project != "" {
		chans = append(chans, where.String(NotesChannelID(agent, project)))
	} else {
		all, err := e.store.Channels(ctx)
		if err != nil {
			return nil, err
		}
		for _, c := range all {
			if c.ChannelType == ChannelAgentNotes && c.OwnerAgentName == agent {
				chans = append(chans, where.String(c.ID))
			}
		}
		if len(chans) == 0 {
			return []Message{}, nil
		}
	}
	return e.store.List(ctx, SelectWhere(where.In("channel_id", chans...)), limit, ListByTime)
}

// GetChannelMessages returns channel's messages, newest first, no older
// than maxAge (0 means any age), at most limit (0 means DefaultLimit). An
// unknown channel is ErrNotFound.
func (e *Engine) GetChannelMessages(ctx context.Context, channel string, maxAge time.Duration, limit int) ([]Message, error) {
	if _, err := parseChannel("channel", channel); err != nil {
		return nil, err
	}
	if maxAge < 0 {
		return nil, invalid("max_age", "must not be negative, got %s", maxAge)
	}
	limit, err := checkLimit(limit, DefaultLimit)
	if err != nil {
		return nil, err
	}
	done, err := e.enterStore()
	if err != nil {
		return nil, err
	}
	defer done()
	if _, ok, err := e.store.Channel(ctx, channel); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("channel %q: %w", channel, ErrNotFound)
	}
	since := int64(0)
	if maxAge > 0 {
		since = e.opts.Now().Add(-maxAge).UnixMilli()
	}
	f := where.And(where.Eq("channel_id", where.String(channel)), where.Gte("timestamp", where.Int(since)))
	return e.store.List(ctx, SelectWhere(f), limit, ListByTime)
}
