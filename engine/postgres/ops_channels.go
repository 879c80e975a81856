package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

// CreateChannel implements engine.Store.
func (s *Store) CreateChannel(ctx context.Context, c engine.Channel) (bool, error) {
	created := false
	now := c.CreatedAt.UnixMilli()
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO channels (id, channel_type, name, description, project_id, created_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
			c.ID, c.ChannelType, c.Name, c.Description, c.ProjectID, now)
		if err != nil {
			return err
		}
		if created = tag.RowsAffected() == 1; !created || c.ProjectID == "" {
			return nil
		}
		for _, name := range engine.ProjectChannelNames() {
			if _, err := tx.Exec(ctx, `INSERT INTO channels (id, channel_type, name, project_id, created_at)
				VALUES ($1, 'project', $2, $3, $4) ON CONFLICT (id) DO NOTHING`,
				engine.ProjectChannelID(c.ProjectID, name), name, c.ProjectID, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("postgres: create channel: %w", err)
	}
	return created, nil
}

// ChannelMessageIDs implements engine.Store.
func (s *Store) ChannelMessageIDs(ctx context.Context, channel string) ([]int64, error) {
	rows, err := s.pool.Query(ctx, "SELECT id FROM messages WHERE channel_id = $1 ORDER BY id", channel)
	if err != nil {
		return nil, fmt.Errorf("postgres: channel messages: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("postgres: channel messages: %w", err)
	}
	return ids, nil
}
