package cairnapi

import (
	"net/http"

	"github.com/cairn-dev/cairn/engine"
)

// MarkReadInput is the body of POST /agents/{agent}/read.
type MarkReadInput struct {
	Channel string `json:"channel,omitempty"`
	Project string `json:"project,omitempty"`
	// UpTo is the last message id read; 0 means the newest.
	UpTo int64 `json:"up_to,omitempty"`
}

func (h *Handler) unread(r *http.Request) (any, int, error) {
	limit, err := queryInt(r, "limit", engine.DefaultLimit, 1, h.opts.MaxLimit)
	if err != nil {
		return nil, 0, err
	}
	q := r.URL.Query()
	u, err := h.opts.Engine.Unread(r.Context(), engine.UnreadRequest{
		Agent: r.PathValue("agent"), Channel: q.Get("channel"), Project: q.Get("project"), Limit: limit,
	})
	if err != nil {
		return nil, 0, err
	}
	n, cut := fitted(u.Messages, h.opts.MaxResultBytes)
	if n < len(u.Messages) {
		// last_id names the last message listed, so that marking read up
		// to it marks what was listed and no more.
		u.Messages, u.LastID = u.Messages[:n], 0
		if n > 0 {
			u.LastID = u.Messages[n-1].ID
		}
	}
	return unreadAnswer{u, cut}, http.StatusOK, nil
}

// unreadAnswer is GET .../unread's answer, cut at MaxResultBytes.
type unreadAnswer struct {
	engine.Unread
	truncation
}

func (h *Handler) markRead(r *http.Request) (any, int, error) {
	var in MarkReadInput
	if err := h.decode(r, &in); err != nil {
		return nil, 0, err
	}
	cur, err := h.opts.Engine.MarkRead(r.Context(), engine.MarkReadRequest{
		Agent: r.PathValue("agent"), Channel: in.Channel, Project: in.Project, UpTo: in.UpTo,
	})
	if err != nil {
		return nil, 0, err
	}
	return cur, http.StatusOK, nil
}
