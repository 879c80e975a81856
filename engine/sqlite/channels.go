package sqlite

import (
	"context"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
)

// The embedded store's channel operations beyond a message write.

// CreateChannel inserts c and, for a channel of a project, the project's
// channels, in one transaction.
func (s *Store) CreateChannel(ctx context.Context, c engine.Channel) (bool, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("engine: create channel: %w", classify(err))
	}
	defer tx.Rollback()
	now := c.CreatedAt.UnixMilli()
	res, err := tx.ExecContext(ctx, `INSERT INTO channels (id, channel_type, name, description, project_id, created_at)
		VALUES (?, 'channel', ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, c.ID, c.Name, c.Description, c.ProjectID, now)
	if err != nil {
		return false, fmt.Errorf("engine: create channel: %w", classify(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if c.ProjectID != "" {
		if err := s.ensureProjectTx(ctx, tx, c.ProjectID, now); err != nil {
			return false, err
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("engine: create channel: %w", classify(err))
	}
	return true, nil
}

func (s *Store) ChannelMessageIDs(ctx context.Context, channel string) ([]int64, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT id FROM messages WHERE channel_id = ? ORDER BY id", channel)
	if err != nil {
		return nil, fmt.Errorf("engine: export: %w", classify(err))
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, classify(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	return ids, nil
}

const channelColumns = `id, channel_type, name, description, owner_agent_name, owner_agent_project_id, project_id, message_count, last_message_at, created_at`

func scanChannel(s rowScanner) (engine.Channel, error) {
	var c engine.Channel
	var last, created int64
	err := s.Scan(&c.ID, &c.ChannelType, &c.Name, &c.Description, &c.OwnerAgentName, &c.OwnerAgentProjectID, &c.ProjectID, &c.MessageCount, &last, &created)
	if last > 0 {
		c.LastMessageAt = fromMillis(last)
	}
	c.CreatedAt = fromMillis(created)
	return c, err
}
