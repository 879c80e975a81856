package engine

import (
	"context"
	"time"
)

// Read cursors (migrations/0006_read_cursors.sql): what each agent has
// read, per channel, per project or across everything.
//
// A message is unread by agent A when A did not write it and its id is
// above every cursor of A that covers it: the cursor over everything, the
// one of its channel and the one of its channel's project. Ids are
// assigned by AUTOINCREMENT inside the write transaction, which holds
// SQLite's one write lock (every writer, in every process, begins with
// BEGIN IMMEDIATE), so a message committed later always has a larger id
// than every message committed before it, and ids are never reused. A
// reader that lists the unread messages in one snapshot and marks read up
// to the largest id it saw therefore never passes over a message that was
// being written while it read.

// UnreadRequest asks what is new for an agent. Channel and Project are
// exclusive; neither means every channel.
type UnreadRequest struct {
	Agent   string
	Channel string
	Project string
	// Limit is the number of messages listed (the oldest unread first);
	// 0 means DefaultLimit.
	Limit int
}

// Unread is what an agent has not read yet in a scope.
type Unread struct {
	Agent   string `json:"agent"`
	Channel string `json:"channel,omitempty"`
	Project string `json:"project,omitempty"`
	// Messages are the oldest unread messages, in id order, at most the
	// request's limit.
	Messages []Message `json:"messages"`
	// Count is the number of unread messages in the scope, listed or not.
	Count int64 `json:"unread"`
	// LastID is the id of the last message listed (0 when none): marking
	// read up to it marks exactly what was listed.
	LastID int64 `json:"last_id,omitempty"`
}

// MarkReadRequest moves an agent's cursor of a scope (Channel, Project or
// neither: everything) to UpTo. UpTo 0 means the newest message now.
type MarkReadRequest struct {
	Agent   string
	Channel string
	Project string
	UpTo    int64
}

// ReadCursor is an agent's cursor of one scope after a MarkRead.
type ReadCursor struct {
	Agent   string `json:"agent"`
	Channel string `json:"channel,omitempty"`
	Project string `json:"project,omitempty"`
	// LastReadID is the largest id read in the scope: cursors never move
	// back, so it may be larger than the UpTo asked for.
	LastReadID int64     `json:"last_read_id"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// CursorScope checks an agent and a scope (a channel or a project, or
// neither for every channel) and returns the scope's key in a store's
// read cursors: "", "channel:ID" or "project:P".
func CursorScope(agent, channel, project string) (string, error) {
	if err := CheckAgent("agent", agent); err != nil {
		return "", err
	}
	if err := checkProject("project", project); err != nil {
		return "", err
	}
	switch {
	case channel != "" && project != "":
		return "", invalid("channel/project", "give a channel or a project, not both")
	case channel != "":
		if _, err := parseChannel("channel", channel); err != nil {
			return "", err
		}
		return "channel:" + channel, nil
	case project != "":
		return "project:" + project, nil
	}
	return "", nil
}

// Unread lists the messages in req's scope that req.Agent has not read,
// oldest first, and counts them. It reads one snapshot and writes nothing.
// An unknown channel is ErrNotFound.
func (e *Engine) Unread(ctx context.Context, req UnreadRequest) (Unread, error) {
	if _, err := CursorScope(req.Agent, req.Channel, req.Project); err != nil {
		return Unread{}, err
	}
	limit, err := checkLimit(req.Limit, DefaultLimit)
	if err != nil {
		return Unread{}, err
	}
	done, err := e.enterStore()
	if err != nil {
		return Unread{}, err
	}
	defer done()
	ms, n, err := e.store.Unread(ctx, req.Agent, req.Channel, req.Project, limit)
	if err != nil {
		return Unread{}, err
	}
	out := Unread{Agent: req.Agent, Channel: req.Channel, Project: req.Project, Messages: ms, Count: n}
	if out.Messages == nil {
		out.Messages = []Message{}
	}
	if len(ms) > 0 {
		out.LastID = ms[len(ms)-1].ID
	}
	return out, nil
}

// MarkRead marks every message of req's scope up to req.UpTo as read by
// req.Agent. Cursors only move forward (a smaller UpTo leaves the cursor
// where it is), and UpTo may not be above the newest message id: such a
// cursor would pass over messages not written yet. The move is one
// statement in a write transaction, so processes marking at once never
// lose a move.
func (e *Engine) MarkRead(ctx context.Context, req MarkReadRequest) (ReadCursor, error) {
	scope, err := CursorScope(req.Agent, req.Channel, req.Project)
	if err != nil {
		return ReadCursor{}, err
	}
	if req.UpTo < 0 {
		return ReadCursor{}, invalid("up_to", "must be a message id (0 means the newest), got %d", req.UpTo)
	}
	done, err := e.enterStore()
	if err != nil {
		return ReadCursor{}, err
	}
	defer done()
	cur, err := e.store.MarkRead(ctx, req.Agent, scope, req.Channel, req.UpTo, e.opts.Now())
	if err != nil {
		return ReadCursor{}, err
	}
	cur.Agent, cur.Channel, cur.Project = req.Agent, req.Channel, req.Project
	return cur, nil
}
