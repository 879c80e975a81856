package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

var _ engine.ChannelStore = (*Store)(nil)

// CreateChannel implements engine.ChannelStore.
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
		return false, fmt.Errorf("pgstore: create channel: %w", err)
	}
	return created, nil
}

// Channel implements engine.ChannelStore.
func (s *Store) Channel(ctx context.Context, id string) (engine.Channel, bool, error) {
	var c engine.Channel
	var last, created int64
	err := s.pool.QueryRow(ctx, `SELECT id, channel_type, name, description, owner_agent_name, owner_agent_project_id, project_id,
		message_count, last_message_at, created_at FROM channels WHERE id = $1`, id).
		Scan(&c.ID, &c.ChannelType, &c.Name, &c.Description, &c.OwnerAgentName, &c.OwnerAgentProjectID, &c.ProjectID,
			&c.MessageCount, &last, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.Channel{}, false, nil
	}
	if err != nil {
		return engine.Channel{}, false, fmt.Errorf("pgstore: channel %s: %w", id, err)
	}
	if last != 0 {
		c.LastMessageAt = time.UnixMilli(last).UTC()
	}
	c.CreatedAt = time.UnixMilli(created).UTC()
	return c, true, nil
}

// ChannelMessageIDs implements engine.ChannelStore.
func (s *Store) ChannelMessageIDs(ctx context.Context, channel string) ([]int64, error) {
	rows, err := s.pool.Query(ctx, "SELECT id FROM messages WHERE channel_id = $1 ORDER BY id", channel)
	if err != nil {
		return nil, fmt.Errorf("pgstore: channel messages: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("pgstore: channel messages: %w", err)
	}
	return ids, nil
}
