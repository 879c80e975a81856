package engine

import (
	"context"
	"slices"
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
	return onStore(e, func(st Store) (Neighbours, error) { return st.ChannelNeighbours(ctx, id, before, after) })
}

// NewNeighbours is the answer a store builds from its two reads of
// channel: older holds up to before+1 messages, newest first, and newer up
// to after+1, oldest first. The one beyond each count says the channel
// goes on, so every store reads one more than asked on each side.
func NewNeighbours(channel string, older, newer []Message, before, after int) Neighbours {
	n := Neighbours{ChannelID: channel}
	if len(older) > before {
		older, n.MoreBefore = older[:before], true
	}
	if len(newer) > after {
		newer, n.MoreAfter = newer[:after], true
	}
	slices.Reverse(older)
	n.Before, n.After = older, newer
	return n
}
