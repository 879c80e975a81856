package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// MaxNeighbours bounds each side of a Neighbours answer.
const MaxNeighbours = 100

// Neighbours are the messages written just before and just after one
// message in its channel (a channel is the thread its messages were written
// in), in the order they were written.
type Neighbours struct {
	ChannelID string `json:"channel_id"`
	// Before holds up to the asked number of older messages, oldest first;
	// After the newer ones, oldest first.
	Before []Message `json:"before"`
	After  []Message `json:"after"`
	// MoreBefore and MoreAfter say the channel holds further messages on
	// that side.
	MoreBefore bool `json:"more_before"`
	MoreAfter  bool `json:"more_after"`
}

// Neighbours returns up to before older and after newer messages of id's
// channel, ordered by (created_at, id) as the channel's listing is. It
// reads only.
func (e *Engine) Neighbours(ctx context.Context, id int64, before, after int) (Neighbours, error) {
	if id <= 0 {
		return Neighbours{}, invalid("id", "must be a positive integer, got %d", id)
	}
	if before < 0 || before > MaxNeighbours {
		return Neighbours{}, invalid("before", "must be from 0 to %d, got %d", MaxNeighbours, before)
	}
	if after < 0 || after > MaxNeighbours {
		return Neighbours{}, invalid("after", "must be from 0 to %d, got %d", MaxNeighbours, after)
	}
	done, err := e.enter()
	if err != nil {
		return Neighbours{}, err
	}
	defer done()
	var channel string
	var created int64
	err = e.r.QueryRowContext(ctx, "SELECT channel_id, created_at FROM messages WHERE id = ?", id).Scan(&channel, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Neighbours{}, fmt.Errorf("message id %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Neighbours{}, fmt.Errorf("engine: neighbours of %d: %w", id, classify(err))
	}
	n := Neighbours{ChannelID: channel}
	// One more than asked on each side tells whether the channel goes on.
	older, err := queryMessages(ctx, e.r, "SELECT "+messageColumns+` FROM messages m
		WHERE m.channel_id = ? AND (m.created_at < ? OR (m.created_at = ? AND m.id < ?))
		ORDER BY m.created_at DESC, m.id DESC LIMIT ?`, channel, created, created, id, before+1)
	if err != nil {
		return Neighbours{}, fmt.Errorf("engine: neighbours of %d: %w", id, err)
	}
	newer, err := queryMessages(ctx, e.r, "SELECT "+messageColumns+` FROM messages m
		WHERE m.channel_id = ? AND (m.created_at > ? OR (m.created_at = ? AND m.id > ?))
		ORDER BY m.created_at, m.id LIMIT ?`, channel, created, created, id, after+1)
	if err != nil {
		return Neighbours{}, fmt.Errorf("engine: neighbours of %d: %w", id, err)
	}
	if len(older) > before {
		older, n.MoreBefore = older[:before], true
	}
	if len(newer) > after {
		newer, n.MoreAfter = newer[:after], true
	}
	for i, j := 0, len(older)-1; i < j; i, j = i+1, j-1 {
		older[i], older[j] = older[j], older[i]
	}
	n.Before, n.After = older, newer
	return n, nil
}
