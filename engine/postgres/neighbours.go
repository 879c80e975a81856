package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

// ChannelNeighbours implements engine.Store: the messages written just
// before and after id in its channel, read through messages_channel_time
// in the embedded store's order (created_at, then id).
func (s *Store) ChannelNeighbours(ctx context.Context, id int64, before, after int) (engine.Neighbours, error) {
	var channel string
	var created int64
	err := s.pool.QueryRow(ctx, "SELECT channel_id, created_at FROM messages WHERE id = $1", id).Scan(&channel, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.Neighbours{}, fmt.Errorf("message id %d: %w", id, engine.ErrNotFound)
	}
	if err != nil {
		return engine.Neighbours{}, fmt.Errorf("postgres: neighbours of %d: %w", id, err)
	}
	older, err := s.queryMessages(ctx, "SELECT "+messageColumns+` FROM messages m
		WHERE m.channel_id = $1 AND (m.created_at, m.id) < ($2, $3)
		ORDER BY m.created_at DESC, m.id DESC LIMIT $4`, channel, created, id, before+1)
	if err != nil {
		return engine.Neighbours{}, fmt.Errorf("postgres: neighbours of %d: %w", id, err)
	}
	newer, err := s.queryMessages(ctx, "SELECT "+messageColumns+` FROM messages m
		WHERE m.channel_id = $1 AND (m.created_at, m.id) > ($2, $3)
		ORDER BY m.created_at, m.id LIMIT $4`, channel, created, id, after+1)
	if err != nil {
		return engine.Neighbours{}, fmt.Errorf("postgres: neighbours of %d: %w", id, err)
	}
	return engine.NewNeighbours(channel, older, newer, before, after), nil
}

// BreadcrumbMessages implements engine.Store (ops.MessagesWithBreadcrumbs).
func (s *Store) BreadcrumbMessages(ctx context.Context, afterID int64, limit int) ([]engine.Message, error) {
	ms, err := s.queryMessages(ctx, "SELECT "+messageColumns+" FROM messages m WHERE m.id > $1 AND m.has_breadcrumbs ORDER BY m.id LIMIT $2", afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: messages with breadcrumbs: %w", err)
	}
	return ms, nil
}

// queryMessages runs a query selecting messageColumns.
func (s *Store) queryMessages(ctx context.Context, q string, args ...any) ([]engine.Message, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanMessages(rows)
}
