package mcpserver

import (
	"context"

	"github.com/cairn-dev/cairn/engine"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GetUnreadInput is get_unread's arguments.
type GetUnreadInput struct {
	Agent   string `json:"agent" jsonschema:"your agent name: what is new for you"`
	Channel string `json:"channel,omitempty" jsonschema:"only this channel (not with project)"`
	Project string `json:"project,omitempty" jsonschema:"only the channels of this project (not with channel); neither means every channel"`
	Limit   int    `json:"limit,omitempty" jsonschema:"number of messages, oldest first (default 20, at most 100)"`
	Full    bool   `json:"full,omitempty" jsonschema:"return whole contents"`
}

// UnreadOutput is what get_unread found.
type UnreadOutput struct {
	Unread  int64 `json:"unread" jsonschema:"unread messages in the scope, listed or not"`
	LastID  int64 `json:"last_id,omitempty" jsonschema:"id of the last message listed: pass it to mark_read as up_to once you have read them"`
	Results []Hit `json:"results"`
	Truncation
}

// MarkReadInput is mark_read's arguments.
type MarkReadInput struct {
	Agent   string `json:"agent" jsonschema:"your agent name"`
	Channel string `json:"channel,omitempty" jsonschema:"mark this channel only (not with project)"`
	Project string `json:"project,omitempty" jsonschema:"mark this project's channels only (not with channel); neither marks everything"`
	UpTo    int64  `json:"up_to,omitempty" jsonschema:"the last message id you read (get_unread's last_id); 0 or absent: everything up to the newest message"`
}

func (s *Server) addUnreadTools() {
	mcp.AddTool(s.mcp, tool("get_unread", readHints("What is new since I last looked"), nil,
		"List the messages you have not read yet (not written by you, above your read cursors), oldest first, per channel, per project or across every channel, with their count. Then call mark_read with last_id. search_messages takes unread_by to search only unread messages."), s.getUnread)
	mcp.AddTool(s.mcp, tool("mark_read", writeHints("Mark messages read"), nil,
		"Mark every message of a scope (a channel, a project or everything) up to a message id as read by you. Cursors only move forward, so a repeated or late call never marks less."), writes(s, s.markRead))
}

func (s *Server) getUnread(ctx context.Context, _ *mcp.CallToolRequest, in GetUnreadInput) (*mcp.CallToolResult, UnreadOutput, error) {
	limit, err := toolLimit(in.Limit, 20)
	if err != nil {
		return nil, UnreadOutput{}, toolError(err)
	}
	eng, err := s.engine(ctx)
	if err != nil {
		return nil, UnreadOutput{}, toolError(err)
	}
	u, err := eng.Unread(ctx, engine.UnreadRequest{Agent: in.Agent, Channel: in.Channel, Project: in.Project, Limit: limit})
	if err != nil {
		return nil, UnreadOutput{}, toolError(err)
	}
	listed := s.hits(u.Messages, in.Full)
	if n := len(listed.Results); n < len(u.Messages) {
		// last_id names the last message listed, so that mark_read up to
		// it marks what was listed and no more.
		u.LastID = 0
		if n > 0 {
			u.LastID = listed.Results[n-1].ID
		}
	}
	return nil, UnreadOutput{Unread: u.Count, LastID: u.LastID, Results: listed.Results, Truncation: listed.Truncation}, nil
}

func (s *Server) markRead(ctx context.Context, _ *mcp.CallToolRequest, in MarkReadInput) (*mcp.CallToolResult, engine.ReadCursor, error) {
	eng, err := s.engine(ctx)
	if err != nil {
		return nil, engine.ReadCursor{}, toolError(err)
	}
	cur, err := eng.MarkRead(ctx, engine.MarkReadRequest{Agent: in.Agent, Channel: in.Channel, Project: in.Project, UpTo: in.UpTo})
	if err != nil {
		return nil, engine.ReadCursor{}, toolError(err)
	}
	return nil, cur, nil
}
