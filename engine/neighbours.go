package engine

import "context"

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
	return onStore(e, func(st Store) (Neighbours, error) { return st.ChannelNeighbours(ctx, id, before, after) })
}
