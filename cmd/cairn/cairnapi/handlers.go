package cairnapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn/cmd/cairn/searchwire"
	"github.com/cairn-dev/cairn/engine"
)

// MessageInput is the body of POST /messages.
type MessageInput struct {
	Channel     string             `json:"channel"`
	Sender      string             `json:"sender"`
	Project     string             `json:"project,omitempty"`
	Content     string             `json:"content"`
	Metadata    json.RawMessage    `json:"metadata,omitempty"`
	Breadcrumbs engine.Breadcrumbs `json:"breadcrumbs,omitzero"`
	Confidence  *float64           `json:"confidence,omitempty"`
	Type        string             `json:"type,omitempty"`
	// Supersedes is the id of an earlier message this one replaces.
	Supersedes int64 `json:"supersedes,omitempty"`
	// CreatedAt backdates an imported message (RFC 3339); absent means
	// now. A string here, parsed by storeMessage, so that a bad time is
	// refused naming created_at rather than the whole body.
	CreatedAt *string `json:"created_at,omitempty"`
}

// NoteInput is the body of POST /notes.
type NoteInput struct {
	Agent       string             `json:"agent"`
	Project     string             `json:"project,omitempty"`
	Content     string             `json:"content"`
	Metadata    json.RawMessage    `json:"metadata,omitempty"`
	Breadcrumbs engine.Breadcrumbs `json:"breadcrumbs,omitzero"`
	Confidence  *float64           `json:"confidence,omitempty"`
	Type        string             `json:"type,omitempty"`
	Supersedes  int64              `json:"supersedes,omitempty"`
}

// ChannelInput is the body of POST /channels.
type ChannelInput struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Project     string `json:"project,omitempty"`
}

func (h *Handler) storeMessage(r *http.Request) (any, int, error) {
	var in MessageInput
	if err := h.decode(r, &in); err != nil {
		return nil, 0, err
	}
	nm := engine.NewMessage{
		Channel: in.Channel, Sender: in.Sender, Project: in.Project, Content: in.Content,
		Metadata: in.Metadata, Breadcrumbs: in.Breadcrumbs, Confidence: in.Confidence, Type: in.Type,
		Supersedes: in.Supersedes,
	}
	if in.CreatedAt != nil {
		t, err := time.Parse(time.RFC3339Nano, *in.CreatedAt)
		if err != nil {
			return nil, 0, invalidf("created_at", "must be an RFC 3339 time such as 2026-01-02T15:04:05Z, got %q", *in.CreatedAt)
		}
		if t.IsZero() { // the engine reads a zero time as "now"
			return nil, 0, invalidf("created_at", "must not be before %s, got %q", engine.MinCreatedAt().Format(time.RFC3339), *in.CreatedAt)
		}
		nm.CreatedAt = t
	}
	res, err := h.opts.Engine.StoreMessage(r.Context(), nm)
	return writeResult(res, err)
}

func (h *Handler) writeNote(r *http.Request) (any, int, error) {
	var in NoteInput
	if err := h.decode(r, &in); err != nil {
		return nil, 0, err
	}
	res, err := h.opts.Engine.WriteNote(r.Context(), engine.NewNote{
		Agent: in.Agent, Project: in.Project, Content: in.Content,
		Metadata: in.Metadata, Breadcrumbs: in.Breadcrumbs, Confidence: in.Confidence, Type: in.Type,
		Supersedes: in.Supersedes,
	})
	return writeResult(res, err)
}

// writeResult answers 201 for a new message and 200 for an existing one.
func writeResult(res engine.WriteResult, err error) (any, int, error) {
	if err != nil {
		return nil, 0, err
	}
	if res.Created {
		return res, http.StatusCreated, nil
	}
	return res, http.StatusOK, nil
}

func pathID(r *http.Request) (int64, error) {
	s := r.PathValue("id")
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, invalidf("id", "must be a positive integer, got %q", s)
	}
	return id, nil
}

func (h *Handler) getMessage(r *http.Request) (any, int, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, 0, err
	}
	m, err := h.opts.Engine.GetMessage(r.Context(), id)
	if err != nil {
		return nil, 0, err
	}
	return m, http.StatusOK, nil
}

func (h *Handler) deleteMessage(r *http.Request) (any, int, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, 0, err
	}
	if err := h.opts.Engine.DeleteMessage(r.Context(), id); err != nil {
		return nil, 0, err
	}
	return map[string]int64{"deleted": id}, http.StatusOK, nil
}

func (h *Handler) search(r *http.Request) (any, int, error) {
	var spec searchwire.SearchSpec
	if err := h.decode(r, &spec); err != nil {
		return nil, 0, err
	}
	req, err := spec.Request()
	if err != nil {
		return nil, 0, err
	}
	resp, err := h.opts.Engine.SearchDetailed(r.Context(), req)
	if err != nil {
		return nil, 0, err
	}
	if resp.Results == nil {
		resp.Results = []engine.SearchResult{}
	}
	n, cut := fitted(resp.Results, h.opts.MaxResultBytes)
	resp.Results = resp.Results[:n]
	return searchAnswer{resp, cut}, http.StatusOK, nil
}

// searchAnswer is POST /search's answer: the engine's response, cut at
// MaxResultBytes.
type searchAnswer struct {
	engine.SearchResponse
	truncation
}

// listing is a listing's answer: an empty one is [] rather than null.
type listing[T any] struct {
	Results []T `json:"results"`
	truncation
}

// list answers xs, cut at MaxResultBytes.
func list[T any](h *Handler, xs []T) listing[T] {
	if xs == nil {
		xs = []T{}
	}
	n, cut := fitted(xs, h.opts.MaxResultBytes)
	return listing[T]{Results: xs[:n], truncation: cut}
}

// truncation says that an answer was cut at MaxResultBytes (both fields
// absent when it was not).
type truncation struct {
	Truncated      bool  `json:"truncated,omitempty"`
	MaxResultBytes int64 `json:"max_result_bytes,omitempty"`
}

// fitted returns how many of xs, from the first, fit in limit bytes of
// JSON, and the truncation to report when not all do. A result over the
// bound is cut at a whole item rather than refused: a caller (often an
// agent) gets the best hits and an explicit signal to ask for fewer or
// narrower ones, instead of an error to recover from. Each item is
// encoded once to be measured (the answer is encoded again).
func fitted[T any](xs []T, limit int64) (int, truncation) {
	var used int64
	for i, x := range xs {
		b, err := json.Marshal(x)
		if err != nil {
			return i, truncation{}
		}
		if used += int64(len(b)) + 1; used > limit {
			return i, truncation{Truncated: true, MaxResultBytes: limit}
		}
	}
	return len(xs), truncation{}
}

func (h *Handler) notes(r *http.Request) (any, int, error) {
	limit, err := queryInt(r, "limit", engine.DefaultSearchLimit, 1, h.opts.MaxLimit)
	if err != nil {
		return nil, 0, err
	}
	ms, err := h.opts.Engine.GetAgentNotes(r.Context(), r.PathValue("agent"), r.URL.Query().Get("project"), limit)
	if err != nil {
		return nil, 0, err
	}
	return list(h, ms), http.StatusOK, nil
}

func (h *Handler) channelMessages(r *http.Request) (any, int, error) {
	limit, err := queryInt(r, "limit", engine.DefaultSearchLimit, 1, h.opts.MaxLimit)
	if err != nil {
		return nil, 0, err
	}
	maxAge, err := queryHours(r, "max_age_hours")
	if err != nil {
		return nil, 0, err
	}
	ms, err := h.opts.Engine.GetChannelMessages(r.Context(), r.PathValue("channel"), maxAge, limit)
	if err != nil {
		return nil, 0, err
	}
	return list(h, ms), http.StatusOK, nil
}

func (h *Handler) channels(r *http.Request) (any, int, error) {
	q := r.URL.Query()
	cs, err := h.opts.Engine.ListChannels(r.Context(), engine.Scope{Kind: q.Get("scope"), Project: q.Get("project"), Agent: q.Get("agent")})
	if err != nil {
		return nil, 0, err
	}
	return list(h, cs), http.StatusOK, nil
}

func (h *Handler) createChannel(r *http.Request) (any, int, error) {
	var in ChannelInput
	if err := h.decode(r, &in); err != nil {
		return nil, 0, err
	}
	c, err := h.opts.Engine.CreateChannel(r.Context(), engine.NewChannel{ID: in.ID, Name: in.Name, Description: in.Description, Project: in.Project})
	if err != nil {
		return nil, 0, err
	}
	return c, http.StatusCreated, nil
}

func (h *Handler) agents(r *http.Request) (any, int, error) {
	as, err := h.opts.Engine.ListAgents(r.Context(), r.URL.Query().Get("project"))
	if err != nil {
		return nil, 0, err
	}
	return list(h, as), http.StatusOK, nil
}
