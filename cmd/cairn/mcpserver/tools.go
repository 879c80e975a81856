package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/cmd/cairn/searchwire"
	"github.com/cairn-dev/cairn/engine"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// firstLineRunes bounds the excerpt of a compact result.
const firstLineRunes = 200

// BreadcrumbsInput is where a piece of knowledge came from.
type BreadcrumbsInput struct {
	Files   []string `json:"files,omitempty" jsonschema:"file paths"`
	Commits []string `json:"commits,omitempty"`
	Issues  []string `json:"issues,omitempty" jsonschema:"e.g. #12"`
	PRs     []string `json:"prs,omitempty"`
}

func (b *BreadcrumbsInput) engine() engine.Breadcrumbs {
	if b == nil {
		return engine.Breadcrumbs{}
	}
	return engine.Breadcrumbs{Files: b.Files, Commits: b.Commits, Issues: b.Issues, PRs: b.PRs}
}

// StoreMessageInput is store_message's arguments.
// channel_id and sender_id are the implementation plan's names for
// channel and sender (store_message(channel_id, sender_id, content,
// metadata, confidence)); either spelling is accepted.
type StoreMessageInput struct {
	Channel     string            `json:"channel,omitempty" jsonschema:"channel id (required; alias channel_id), e.g. project:{project}:decisions; created if missing"`
	ChannelID   string            `json:"channel_id,omitempty"`
	Sender      string            `json:"sender,omitempty" jsonschema:"your agent name (required; alias sender_id)"`
	SenderID    string            `json:"sender_id,omitempty"`
	Project     string            `json:"project,omitempty" jsonschema:"your project: the repository's top directory name"`
	Content     string            `json:"content" jsonschema:"the text (at most 1 MiB)"`
	Confidence  *float64          `json:"confidence,omitempty" jsonschema:"how sure you are, 0 to 1 (default 0.5)"`
	Type        string            `json:"type,omitempty" jsonschema:"decision, pattern, policy, reflection, message (default) or your own word"`
	Metadata    map[string]any    `json:"metadata,omitempty" jsonschema:"any JSON object to keep with it"`
	Breadcrumbs *BreadcrumbsInput `json:"breadcrumbs,omitempty" jsonschema:"where the knowledge came from, so others can check it"`
	Supersedes  int64             `json:"supersedes,omitempty" jsonschema:"id of an earlier message this one corrects (it leaves search)"`
}

// WriteNoteInput is write_note's arguments.
type WriteNoteInput struct {
	Agent       string            `json:"agent" jsonschema:"your agent name; the note goes to agent-notes:{agent} or agent-notes:{agent}:{project}"`
	Project     string            `json:"project,omitempty" jsonschema:"project id, if the note is about one project"`
	Content     string            `json:"content" jsonschema:"the note (non-empty, at most 1 MiB)"`
	Confidence  *float64          `json:"confidence,omitempty" jsonschema:"how sure you are, 0 to 1 (default 0.5)"`
	Type        string            `json:"type,omitempty" jsonschema:"reflection (default), decision, pattern, policy or your own word"`
	Metadata    map[string]any    `json:"metadata,omitempty" jsonschema:"any JSON object to keep with the note"`
	Breadcrumbs *BreadcrumbsInput `json:"breadcrumbs,omitempty" jsonschema:"where the knowledge came from"`
	Supersedes  int64             `json:"supersedes,omitempty" jsonschema:"id of an earlier message this one corrects; it leaves search"`
}

// WriteOutput is what a write did.
type WriteOutput struct {
	ID        int64  `json:"id"`
	ChannelID string `json:"channel_id"`
	Created   bool   `json:"created" jsonschema:"false when the same content from the same sender was already in the channel (id is then the existing message)"`
	// NearDuplicate: id is an earlier message of the sender saying nearly
	// the same; nothing was written (supersedes replaces it).
	NearDuplicate bool `json:"near_duplicate,omitempty"`
}

// SearchInput is search_messages' arguments: the engine's search (the
// same JSON the HTTP API takes) and how much of each hit to return.
type SearchInput struct {
	searchwire.SearchSpec
	Full bool `json:"full,omitempty" jsonschema:"return whole contents, metadata and the score breakdown instead of first lines"`
}

// Hit is one search result. Compact hits carry the first line of content;
// full ones the content and metadata.
type Hit struct {
	ID         int64          `json:"id"`
	ChannelID  string         `json:"channel_id"`
	Sender     string         `json:"sender"`
	Type       string         `json:"type"`
	Confidence float64        `json:"confidence"`
	CreatedAt  time.Time      `json:"created_at"`
	Score      float64        `json:"score,omitempty"`
	Scores     *engine.Scores `json:"scores,omitempty"`
	// VectorMissing says the hit could only be found by keyword: its
	// vector is not built yet.
	VectorMissing bool                `json:"vector_missing,omitempty"`
	FirstLine     string              `json:"first_line,omitempty"`
	Content       string              `json:"content,omitempty"`
	Metadata      map[string]any      `json:"metadata,omitempty"`
	Breadcrumbs   *engine.Breadcrumbs `json:"breadcrumbs,omitempty"`
	// BreadcrumbCheck marks each breadcrumb valid, moved, changed or gone
	// at the repository's HEAD, from the marks cache.
	BreadcrumbCheck *engine.BreadcrumbCheck `json:"breadcrumb_check,omitempty"`
	// Supersedes and SupersededBy link a correction and what it replaced.
	Supersedes   int64 `json:"supersedes,omitempty"`
	SupersededBy int64 `json:"superseded_by,omitempty"`
}

// HitsOutput is a list of messages.
type HitsOutput struct {
	Results []Hit `json:"results"`
	Truncation
}

// GetMessageInput is get_message's arguments.
type GetMessageInput struct {
	ID int64 `json:"id" jsonschema:"the message id"`
}

// GetNotesInput is get_notes' arguments.
type GetNotesInput struct {
	Agent   string `json:"agent" jsonschema:"the agent whose notes to read"`
	Project string `json:"project,omitempty" jsonschema:"only the notes about this project; empty reads all of the agent's notes"`
	Limit   int    `json:"limit,omitempty" jsonschema:"number of notes, newest first (default 20, at most 100)"`
	Full    bool   `json:"full,omitempty" jsonschema:"return whole contents"`
}

// ChannelMessagesInput is get_channel_messages' arguments.
type ChannelMessagesInput struct {
	Channel     string  `json:"channel" jsonschema:"the channel id"`
	MaxAgeHours float64 `json:"max_age_hours,omitempty" jsonschema:"only messages at most this many hours old"`
	Limit       int     `json:"limit,omitempty" jsonschema:"number of messages, newest first (default 20, at most 100)"`
	Full        bool    `json:"full,omitempty" jsonschema:"return whole contents"`
}

// ListChannelsInput is list_channels' arguments.
type ListChannelsInput struct {
	Scope   string `json:"scope,omitempty" jsonschema:"all (default), notes or project"`
	Project string `json:"project,omitempty" jsonschema:"only channels of this project"`
	Agent   string `json:"agent,omitempty" jsonschema:"with scope notes: only this agent's notes channels"`
}

// ChannelsOutput lists channels.
type ChannelsOutput struct {
	Channels []engine.Channel `json:"channels"`
}

const maxToolLimit = 100

func (s *Server) storeMessage(ctx context.Context, req *mcp.CallToolRequest, in StoreMessageInput) (*mcp.CallToolResult, WriteOutput, error) {
	return s.store(ctx, req, in, false)
}

// memoryStore is store_message with the channel optional: without one the
// memory goes to the sender's notes channel.
func (s *Server) memoryStore(ctx context.Context, req *mcp.CallToolRequest, in StoreMessageInput) (*mcp.CallToolResult, WriteOutput, error) {
	return s.store(ctx, req, in, true)
}

func (s *Server) store(ctx context.Context, req *mcp.CallToolRequest, in StoreMessageInput, notesByDefault bool) (*mcp.CallToolResult, WriteOutput, error) {
	sender, err := aliased("sender", in.Sender, "sender_id", in.SenderID, true)
	if err != nil {
		return nil, WriteOutput{}, err
	}
	channel, err := aliased("channel", in.Channel, "channel_id", in.ChannelID, !notesByDefault)
	if err != nil {
		return nil, WriteOutput{}, err
	}
	if channel == "" {
		channel = engine.NotesChannelID(sender, in.Project)
	}
	in.Channel, in.Sender = channel, sender
	return s.storeResolved(ctx, req, in)
}

// aliased is the value of an argument that has two names: they must not
// disagree, and a required one must be given under either.
func aliased(name, v, aliasName, alias string, required bool) (string, error) {
	switch {
	case v != "" && alias != "" && v != alias:
		return "", invalidArg(name, fmt.Sprintf("%s and its alias %s differ (%q, %q); give one", name, aliasName, v, alias))
	case v == "" && alias == "" && required:
		return "", invalidArg(name, fmt.Sprintf("is required (or %s)", aliasName))
	case v == "":
		return alias, nil
	}
	return v, nil
}

func (s *Server) storeResolved(ctx context.Context, req *mcp.CallToolRequest, in StoreMessageInput) (*mcp.CallToolResult, WriteOutput, error) {
	eng, err := s.engine(ctx)
	if err != nil {
		return nil, WriteOutput{}, toolError(err)
	}
	md, err := metadataJSON(req, in.Metadata)
	if err != nil {
		return nil, WriteOutput{}, toolError(err)
	}
	res, err := eng.StoreMessage(ctx, engine.NewMessage{
		Channel: in.Channel, Sender: in.Sender, Project: in.Project, Content: in.Content,
		Metadata: md, Breadcrumbs: in.Breadcrumbs.engine(), Confidence: in.Confidence, Type: in.Type, Supersedes: in.Supersedes,
	})
	if err != nil {
		return nil, WriteOutput{}, toolError(err)
	}
	return nil, WriteOutput{ID: res.ID, ChannelID: res.ChannelID, Created: res.Created, NearDuplicate: res.NearDuplicate}, nil
}

func (s *Server) writeNote(ctx context.Context, req *mcp.CallToolRequest, in WriteNoteInput) (*mcp.CallToolResult, WriteOutput, error) {
	eng, err := s.engine(ctx)
	if err != nil {
		return nil, WriteOutput{}, toolError(err)
	}
	md, err := metadataJSON(req, in.Metadata)
	if err != nil {
		return nil, WriteOutput{}, toolError(err)
	}
	res, err := eng.WriteNote(ctx, engine.NewNote{
		Agent: in.Agent, Project: in.Project, Content: in.Content,
		Metadata: md, Breadcrumbs: in.Breadcrumbs.engine(), Confidence: in.Confidence, Type: in.Type, Supersedes: in.Supersedes,
	})
	if err != nil {
		return nil, WriteOutput{}, toolError(err)
	}
	return nil, WriteOutput{ID: res.ID, ChannelID: res.ChannelID, Created: res.Created, NearDuplicate: res.NearDuplicate}, nil
}

func (s *Server) search(ctx context.Context, call *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchOutput, error) {
	if err := strictArguments(call, &SearchInput{}); err != nil {
		return nil, SearchOutput{}, err
	}
	req, err := in.SearchSpec.Request()
	if err != nil {
		return nil, SearchOutput{}, toolError(err)
	}
	eng, err := s.engine(ctx)
	if err != nil {
		return nil, SearchOutput{}, toolError(err)
	}
	resp, err := eng.SearchDetailed(ctx, req)
	if err != nil {
		return nil, SearchOutput{}, toolError(err)
	}
	out := SearchOutput{Mode: string(resp.Mode), Notes: resp.Notes, BelowFloor: resp.BelowFloor, Results: make([]Hit, len(resp.Results))}
	for i, r := range resp.Results {
		h := hit(r.Message, r.Score, in.Full)
		h.VectorMissing = r.VectorMissing
		if in.Full {
			sc := r.Scores
			h.Scores = &sc
		}
		out.Results[i] = h
	}
	n, cut := s.fitted(out.Results)
	out.Results, out.Truncation = out.Results[:n], cut
	return nil, out, nil
}

// SearchOutput is search_messages' result.
type SearchOutput struct {
	Results []Hit `json:"results"`
	// Mode is the mode that ran (hybrid falls back to keyword without
	// vectors); Notes say why a search was degraded, each with its kind.
	Mode  string              `json:"mode"`
	Notes []engine.SearchNote `json:"notes,omitempty"`
	// BelowFloor counts the messages found but less likely relevant than
	// min_score: none returned and some below means nothing relevant.
	BelowFloor int `json:"below_floor,omitempty"`
	Truncation
}

// Truncation says that a result was cut at Options.MaxResultBytes (both
// fields absent when it was not).
type Truncation struct {
	Truncated      bool  `json:"truncated,omitempty"`
	MaxResultBytes int64 `json:"max_result_bytes,omitempty"`
}

// fitted returns how many of hs, from the first, fit in
// Options.MaxResultBytes of JSON, and the truncation to report when not
// all do. A result over the bound is cut at a whole message rather than
// refused: the agent gets the best hits and an explicit signal to ask for
// fewer (limit) or narrower ones, instead of a tool error to recover from.
func (s *Server) fitted(hs []Hit) (int, Truncation) {
	var used int64
	for i, h := range hs {
		b, err := json.Marshal(h)
		if err != nil {
			return i, Truncation{}
		}
		if used += int64(len(b)) + 1; used > s.opts.MaxResultBytes {
			return i, Truncation{Truncated: true, MaxResultBytes: s.opts.MaxResultBytes}
		}
	}
	return len(hs), Truncation{}
}

func (s *Server) getMessage(ctx context.Context, _ *mcp.CallToolRequest, in GetMessageInput) (*mcp.CallToolResult, Hit, error) {
	eng, err := s.engine(ctx)
	if err != nil {
		return nil, Hit{}, toolError(err)
	}
	m, err := eng.GetMessage(ctx, in.ID)
	if err != nil {
		return nil, Hit{}, toolError(err)
	}
	return nil, hit(m, 0, true), nil
}

func (s *Server) getNotes(ctx context.Context, _ *mcp.CallToolRequest, in GetNotesInput) (*mcp.CallToolResult, HitsOutput, error) {
	limit, err := toolLimit(in.Limit, 20)
	if err != nil {
		return nil, HitsOutput{}, toolError(err)
	}
	eng, err := s.engine(ctx)
	if err != nil {
		return nil, HitsOutput{}, toolError(err)
	}
	ms, err := eng.GetAgentNotes(ctx, in.Agent, in.Project, limit)
	if err != nil {
		return nil, HitsOutput{}, toolError(err)
	}
	return nil, s.hits(ms, in.Full), nil
}

func (s *Server) channelMessages(ctx context.Context, _ *mcp.CallToolRequest, in ChannelMessagesInput) (*mcp.CallToolResult, HitsOutput, error) {
	limit, err := toolLimit(in.Limit, 20)
	if err != nil {
		return nil, HitsOutput{}, toolError(err)
	}
	if math.IsNaN(in.MaxAgeHours) || in.MaxAgeHours < 0 || in.MaxAgeHours > engine.MaxHours {
		return nil, HitsOutput{}, invalidArg("max_age_hours", fmt.Sprintf("must be a number of hours from 0 to %.0f, got %v", float64(engine.MaxHours), in.MaxAgeHours))
	}
	eng, err := s.engine(ctx)
	if err != nil {
		return nil, HitsOutput{}, toolError(err)
	}
	ms, err := eng.GetChannelMessages(ctx, in.Channel, time.Duration(in.MaxAgeHours*float64(time.Hour)), limit)
	if err != nil {
		return nil, HitsOutput{}, toolError(err)
	}
	return nil, s.hits(ms, in.Full), nil
}

func (s *Server) listChannels(ctx context.Context, _ *mcp.CallToolRequest, in ListChannelsInput) (*mcp.CallToolResult, ChannelsOutput, error) {
	eng, err := s.engine(ctx)
	if err != nil {
		return nil, ChannelsOutput{}, toolError(err)
	}
	cs, err := eng.ListChannels(ctx, engine.Scope{Kind: in.Scope, Project: in.Project, Agent: in.Agent})
	if err != nil {
		return nil, ChannelsOutput{}, toolError(err)
	}
	if cs == nil {
		cs = []engine.Channel{}
	}
	return nil, ChannelsOutput{Channels: cs}, nil
}

// strictArguments decodes a call's arguments into v refusing unknown
// fields at any depth: the compact search schema states nested objects
// as bare objects, so the schema check alone would let a misspelt nested
// filter through and silently search without it.
func strictArguments(call *mcp.CallToolRequest, v any) error {
	if call == nil || call.Params == nil || len(call.Params.Arguments) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(call.Params.Arguments))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		field := "arguments"
		if _, name, ok := strings.Cut(err.Error(), "unknown field "); ok {
			field = strings.Trim(name, `"`)
		}
		return invalidArg(field, err.Error())
	}
	return nil
}

// toolLimit checks a limit argument: 0 means def.
func toolLimit(limit, def int) (int, error) {
	switch {
	case limit == 0:
		return def, nil
	case limit < 0 || limit > maxToolLimit:
		return 0, invalidArg("limit", fmt.Sprintf("must be between 1 and %d, got %d", maxToolLimit, limit))
	}
	return limit, nil
}

// metadataJSON returns a write's metadata as the client sent it, so the
// engine judges the JSON itself (a key given twice, which decoding into md
// would hide), else md encoded.
func metadataJSON(req *mcp.CallToolRequest, md map[string]any) (json.RawMessage, error) {
	if md == nil {
		return nil, nil
	}
	if req != nil && req.Params != nil {
		var args struct {
			Metadata json.RawMessage `json:"metadata"`
		}
		if json.Unmarshal(req.Params.Arguments, &args) == nil && len(args.Metadata) > 0 {
			return args.Metadata, nil
		}
	}
	b, err := json.Marshal(md)
	if err != nil {
		return nil, invalidArg("metadata", err.Error())
	}
	return b, nil
}

// hits lists ms, cut at Options.MaxResultBytes.
func (s *Server) hits(ms []engine.Message, full bool) HitsOutput {
	out := HitsOutput{Results: make([]Hit, len(ms))}
	for i, m := range ms {
		out.Results[i] = hit(m, 0, full)
	}
	n, cut := s.fitted(out.Results)
	out.Results, out.Truncation = out.Results[:n], cut
	return out
}

func hit(m engine.Message, score float64, full bool) Hit {
	h := Hit{
		ID: m.ID, ChannelID: m.ChannelID, Sender: m.SenderID, Type: m.MessageType,
		Confidence: m.Confidence, CreatedAt: m.CreatedAt, Score: score,
		Supersedes: m.Supersedes, SupersededBy: m.SupersededBy,
	}
	if bc := m.Breadcrumbs(); !bc.Empty() {
		h.Breadcrumbs = &bc
	}
	h.BreadcrumbCheck = m.BreadcrumbCheck
	if full {
		h.Content = m.Content
		// Stored metadata is a JSON object (validated on write).
		_ = json.Unmarshal(m.Metadata, &h.Metadata)
	} else {
		h.FirstLine = firstLine(m.Content)
	}
	return h
}

// firstLine is the first non-blank line of s, cut to firstLineRunes runes
// with an ellipsis when longer (or when more lines follow).
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	line, rest, _ := strings.Cut(s, "\n")
	line = strings.TrimSpace(line)
	r := []rune(line)
	if len(r) > firstLineRunes {
		return string(r[:firstLineRunes]) + "…"
	}
	if strings.TrimSpace(rest) != "" {
		return line + " …"
	}
	return line
}
