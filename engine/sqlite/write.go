package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/fts/ftssql"
)

// The embedded store's write path: one message in one transaction, its
// channel, project channels and agent, its FTS5 row and outbox rows.

// write runs one message write in its own transaction, at now (Unix ms).
func (s *Store) write(ctx context.Context, p engine.StoredMessage, now int64) (engine.WriteResult, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return engine.WriteResult{}, fmt.Errorf("engine: store message: %w", classify(err))
	}
	defer tx.Rollback()
	res, err := s.writeTxAt(ctx, tx, p, now)
	if err != nil {
		return engine.WriteResult{}, err
	}
	counted := s.addSearchesTx(ctx, tx)
	err = tx.Commit()
	counted(err == nil)
	if err != nil {
		return engine.WriteResult{}, fmt.Errorf("engine: store message: %w", classify(err))
	}
	if res.Created {
		s.host.Wake() // engine/worker.go
	}
	return res, nil
}

// writeTxAt stores p inside tx at now (Unix ms): the message, its FTS5
// row and its vector outbox rows in one transaction, so the keyword index
// and the vectors can never miss a committed message.
func (st *Store) writeTxAt(ctx context.Context, tx *sql.Tx, p engine.StoredMessage, now int64) (engine.WriteResult, error) {
	created := p.CreatedAt.UnixMilli()
	if created == 0 {
		created = now
	}
	res := engine.WriteResult{ChannelID: p.Channel.ID, ContentHash: p.ContentHash}
	if err := st.ensureChannelTx(ctx, tx, p.Channel, now); err != nil {
		return res, err
	}
	err := tx.QueryRowContext(ctx,
		"SELECT id FROM messages WHERE content_hash = ? AND channel_id = ? AND sender_id = ?",
		p.ContentHash, p.Channel.ID, p.Sender).Scan(&res.ID)
	switch {
	case err == nil:
		// An agent's activity is dated by what it wrote (an imported record
		// keeps its own time), not by when it was stored.
		if err := st.touchAgentTx(ctx, tx, p.Sender, p.Project, now, created, created, 0); err != nil {
			return res, err
		}
		return res, nil
	case !errors.Is(err, sql.ErrNoRows):
		return res, fmt.Errorf("engine: store message: %w", classify(err))
	}
	// A repeat of a write is recognised before its supersedes is checked:
	// it links nothing, and writing it again is not an error.
	if err := engine.CheckSupersedes(ctx, txQuerier{tx}, p.Supersedes); err != nil {
		return res, err
	}
	err = tx.QueryRowContext(ctx, `INSERT INTO messages
		(channel_id, sender_id, sender_project_id, content, content_hash, confidence, message_type, metadata, mentions, word_count, has_breadcrumbs, created_at, supersedes)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, nullif(?, 0)) RETURNING id`,
		p.Channel.ID, p.Sender, p.Project, p.Content, p.ContentHash, p.Confidence, p.Type, p.Metadata, p.Mentions, p.WordCount, p.HasBreadcrumbs, created, p.Supersedes).Scan(&res.ID)
	if err != nil {
		return res, fmt.Errorf("engine: store message: %w", classify(err))
	}
	if err := st.fts.Insert(ctx, ftssql.Of(tx), res.ID, p.Content); err != nil {
		return res, fmt.Errorf("engine: store message: %w", classify(err))
	}
	if err := st.outboxAddTx(ctx, tx, res.ID); err != nil { // vector outbox (outbox.go)
		return res, err
	}
	if _, err := tx.ExecContext(ctx,
		"UPDATE channels SET message_count = message_count + 1, last_message_at = max(last_message_at, ?) WHERE id = ?",
		created, p.Channel.ID); err != nil {
		return res, fmt.Errorf("engine: store message: %w", classify(err))
	}
	if err := st.touchAgentTx(ctx, tx, p.Sender, p.Project, now, created, created, 1); err != nil {
		return res, err
	}
	res.Created = true
	return res, nil
}

// ensureChannelTx creates the channel of a write if it is missing:
// channels are namespaces, so writing to one creates it, on every surface
// (a plain channel gets its id as its name and no description; CreateChannel
// makes one with a description first).
func (st *Store) ensureChannelTx(ctx context.Context, tx *sql.Tx, c engine.Channel, now int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO channels (id, channel_type, name, owner_agent_name, owner_agent_project_id, project_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		c.ID, c.ChannelType, c.Name, c.OwnerAgentName, c.OwnerAgentProjectID, c.ProjectID, now)
	if err != nil {
		return fmt.Errorf("engine: create channel %s: %w", c.ID, classify(err))
	}
	if c.ProjectID != "" {
		return st.ensureProjectTx(ctx, tx, c.ProjectID, now)
	}
	return nil
}

// ensureProjectTx makes the channels every project has.
func (st *Store) ensureProjectTx(ctx context.Context, tx *sql.Tx, project string, now int64) error {
	for _, name := range engine.ProjectChannelNames() {
		_, err := tx.ExecContext(ctx, `INSERT INTO channels (id, channel_type, name, project_id, created_at)
			VALUES (?, 'project', ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			engine.ProjectChannelID(project, name), name, project, now)
		if err != nil {
			return fmt.Errorf("engine: create project channels for %s: %w", project, classify(err))
		}
	}
	return nil
}

// touchAgentTx records writes by agent (name, project) of what it wrote
// between first and last (the messages' own times): creates it on first
// write, keeps created_at the earliest and last_active the latest, adds n
// to its message count. now dates the project channels it may create.
func (s *Store) touchAgentTx(ctx context.Context, tx *sql.Tx, name, project string, now, first, last int64, n int) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO agents (name, project_id, message_count, created_at, last_active)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name, project_id) DO UPDATE SET created_at = min(created_at, excluded.created_at), last_active = max(last_active, excluded.last_active), message_count = message_count + excluded.message_count`,
		name, project, n, first, last)
	if err != nil {
		return fmt.Errorf("engine: record agent %s: %w", name, classify(err))
	}
	if project != "" {
		return s.ensureProjectTx(ctx, tx, project, now)
	}
	return nil
}

// txQuerier is a SQLite transaction as a SupersedesQuerier.
type txQuerier struct{ tx *sql.Tx }

func (q txQuerier) QueryRow(ctx context.Context, query string, args []any, dest ...any) (bool, error) {
	err := q.tx.QueryRowContext(ctx, query+"?", args...).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, classify(err)
}
