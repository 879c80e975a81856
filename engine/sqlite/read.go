package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
	"strings"
)

// The embedded store's reads of messages.

const messageColumns = `m.id, m.channel_id, m.sender_id, m.sender_project_id, m.content, m.content_hash, m.confidence,
	m.message_type, m.metadata, m.mentions, m.word_count, m.has_breadcrumbs, m.created_at,
	coalesce(m.supersedes, 0), coalesce((SELECT s.id FROM messages s WHERE s.supersedes = m.id), 0)`

type rowScanner interface{ Scan(dest ...any) error }

func scanMessage(s rowScanner) (engine.Message, error) {
	var m engine.Message
	var metadata, mentions string
	var created int64
	err := s.Scan(&m.ID, &m.ChannelID, &m.SenderID, &m.SenderProjectID, &m.Content, &m.ContentHash, &m.Confidence,
		&m.MessageType, &metadata, &mentions, &m.WordCount, &m.HasBreadcrumbs, &created, &m.Supersedes, &m.SupersededBy)
	if err != nil {
		return m, err
	}
	m.Metadata = json.RawMessage(metadata)
	if err := json.Unmarshal([]byte(mentions), &m.Mentions); err != nil {
		return m, fmt.Errorf("%w: message %d mentions: %v", engine.ErrCorrupt, m.ID, err)
	}
	if m.Mentions == nil {
		m.Mentions = []string{}
	}
	m.CreatedAt = fromMillis(created)
	return m, nil
}

func queryMessages(ctx context.Context, db *sql.DB, query string, args ...any) ([]engine.Message, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	out := []engine.Message{}
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, classify(err)
		}
		out = append(out, m)
	}
	return out, classify(rows.Err())
}

// getMessages reads the messages ids, in the order of ids; missing ids
// are skipped.
func (d *Store) getMessages(ctx context.Context, ids []int64) ([]engine.Message, error) {
	if len(ids) == 0 {
		return []engine.Message{}, nil
	}
	ms, err := queryMessages(ctx, d.r, "SELECT "+messageColumns+" FROM messages m WHERE m.id IN ("+placeholders(len(ids))+")", int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("engine: get messages: %w", err)
	}
	return engine.InOrder(ids, ms), nil
}

// rankFacts reads what ranking needs of each message in ids (id,
// sender_id, confidence, created_at, superseded_by), in the order of ids;
// missing ids are skipped.
func (st *Store) rankFacts(ctx context.Context, ids []int64) ([]engine.Message, error) {
	if len(ids) == 0 {
		return []engine.Message{}, nil
	}
	rows, err := st.r.QueryContext(ctx, "SELECT m.id, m.sender_id, m.confidence, m.created_at, coalesce((SELECT s.id FROM messages s WHERE s.supersedes = m.id), 0) FROM messages m WHERE m.id IN ("+placeholders(len(ids))+")", int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("engine: get messages: %w", classify(err))
	}
	defer rows.Close()
	var ms []engine.Message
	for rows.Next() {
		var m engine.Message
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
	return engine.InOrder(ids, ms), nil
}

// int64Args returns ids as query arguments.
func int64Args(ids []int64) []any {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return args
}

func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?,", n-1) + "?"
}

func stringArgs(ss []string) []any {
	args := make([]any, len(ss))
	for i, s := range ss {
		args[i] = s
	}
	return args
}
