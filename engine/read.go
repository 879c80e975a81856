package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/vecstore/where"
)

// MaxLimit is the largest limit a listing or search accepts.
const MaxLimit = 10000

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// checkLimit validates a limit field; 0 means def.
func checkLimit(limit, def int) (int, error) {
	if limit < 0 || limit > MaxLimit {
		return 0, invalid("limit", "must be from 1 to %d (0 means the default), got %d", MaxLimit, limit)
	}
	if limit == 0 {
		return def, nil
	}
	return limit, nil
}

// GetMessage returns the message with id, or an error wrapping ErrNotFound.
func (e *Engine) GetMessage(ctx context.Context, id int64) (Message, error) {
	if id <= 0 {
		return Message{}, invalid("id", "must be a positive integer, got %d", id)
	}
	done, err := e.enterStore()
	if err != nil {
		return Message{}, err
	}
	defer done()
	ms, err := e.store.Messages(ctx, []int64{id})
	if err != nil {
		return Message{}, err
	}
	if len(ms) == 0 {
		return Message{}, fmt.Errorf("message id %d: %w", id, ErrNotFound)
	}
	m := ms[0]
	if err := e.attachChecks(ctx, []*Message{&m}); err != nil {
		return Message{}, err
	}
	return m, nil
}

// GetMessages returns the messages with the given ids that exist, in the
// order of ids.
func (e *Engine) GetMessages(ctx context.Context, ids []int64) ([]Message, error) {
	done, err := e.enterStore()
	if err != nil {
		return nil, err
	}
	defer done()
	if len(ids) == 0 {
		return []Message{}, nil
	}
	ms, err := e.store.Messages(ctx, ids)
	if err != nil {
		return nil, err
	}
	return InOrder(ids, ms), nil
}

// InOrder returns ms in the order of ids; ids without a message are
// skipped (a store answers a read by ids in any order).
func InOrder(ids []int64, ms []Message) []Message {
	byID := make(map[int64]Message, len(ms))
	for _, m := range ms {
		byID[m.ID] = m
	}
	out := make([]Message, 0, len(ms))
	for _, id := range ids {
		if m, ok := byID[id]; ok {
			out = append(out, m)
		}
	}
	return out
}

// DefaultLimit is the number of messages a listing returns when limit is 0.
const DefaultLimit = 50

// GetAgentNotes returns agent's notes, newest first: with project "" from
// all of the agent's notes channels, otherwise from
// agent-notes:{agent}:{project} only. limit 0 means DefaultLimit. An agent
// without notes has an empty list.
func (e *Engine) GetAgentNotes(ctx context.Context, agent, project string, limit int) ([]Message, error) {
	if err := CheckAgent("agent", agent); err != nil {
		return nil, err
	}
	if err := checkProject("project", project); err != nil {
		return nil, err
	}
	limit, err := checkLimit(limit, DefaultLimit)
	if err != nil {
		return nil, err
	}
	done, err := e.enterStore()
	if err != nil {
		return nil, err
	}
	defer done()
	var chans []where.Value
	if project != "" {
		chans = append(chans, where.String(NotesChannelID(agent, project)))
	} else {
		all, err := e.store.Channels(ctx)
		if err != nil {
			return nil, err
		}
		for _, c := range all {
			if c.ChannelType == ChannelAgentNotes && c.OwnerAgentName == agent {
				chans = append(chans, where.String(c.ID))
			}
		}
		if len(chans) == 0 {
			return []Message{}, nil
		}
	}
	return e.store.List(ctx, SelectWhere(where.In("channel_id", chans...)), limit, ListByTime)
}

// GetChannelMessages returns channel's messages, newest first, no older
// than maxAge (0 means any age), at most limit (0 means DefaultLimit). An
// unknown channel is ErrNotFound.
func (e *Engine) GetChannelMessages(ctx context.Context, channel string, maxAge time.Duration, limit int) ([]Message, error) {
	if _, err := parseChannel("channel", channel); err != nil {
		return nil, err
	}
	if maxAge < 0 {
		return nil, invalid("max_age", "must not be negative, got %s", maxAge)
	}
	limit, err := checkLimit(limit, DefaultLimit)
	if err != nil {
		return nil, err
	}
	done, err := e.enterStore()
	if err != nil {
		return nil, err
	}
	defer done()
	if _, ok, err := e.store.Channel(ctx, channel); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("channel %q: %w", channel, ErrNotFound)
	}
	since := int64(0)
	if maxAge > 0 {
		since = e.opts.Now().Add(-maxAge).UnixMilli()
	}
	f := where.And(where.Eq("channel_id", where.String(channel)), where.Gte("timestamp", where.Int(since)))
	return e.store.List(ctx, SelectWhere(f), limit, ListByTime)
}
