package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
)

// ChannelNeighbours reads the messages written just before and after id
// in its channel (Engine.Neighbours).
func (e *Store) ChannelNeighbours(ctx context.Context, id int64, before, after int) (engine.Neighbours, error) {
	var channel string
	var created int64
	err := e.r.QueryRowContext(ctx, "SELECT channel_id, created_at FROM messages WHERE id = ?", id).Scan(&channel, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return engine.Neighbours{}, fmt.Errorf("message id %d: %w", id, engine.ErrNotFound)
	}
	if err != nil {
		return engine.Neighbours{}, fmt.Errorf("engine: neighbours of %d: %w", id, classify(err))
	}
	older, err := queryMessages(ctx, e.r, "SELECT "+messageColumns+` FROM messages m
		WHERE m.channel_id = ? AND (m.created_at < ? OR (m.created_at = ? AND m.id < ?))
		ORDER BY m.created_at DESC, m.id DESC LIMIT ?`, channel, created, created, id, before+1)
	if err != nil {
		return engine.Neighbours{}, fmt.Errorf("engine: neighbours of %d: %w", id, err)
	}
	newer, err := queryMessages(ctx, e.r, "SELECT "+messageColumns+` FROM messages m
		WHERE m.channel_id = ? AND (m.created_at > ? OR (m.created_at = ? AND m.id > ?))
		ORDER BY m.created_at, m.id LIMIT ?`, channel, created, created, id, after+1)
	if err != nil {
		return engine.Neighbours{}, fmt.Errorf("engine: neighbours of %d: %w", id, err)
	}
	return engine.NewNeighbours(channel, older, newer, before, after), nil
}
