package mcpserver

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DeleteInput is memory_delete's arguments. Confirm must repeat the id in
// words, so that a delete never happens by a slip of a generated argument.
type DeleteInput struct {
	ID      int64  `json:"id" jsonschema:"the id of the message to delete"`
	Confirm string `json:"confirm" jsonschema:"must be exactly 'delete message ID' with the same id, e.g. 'delete message 42'"`
}

// DeleteOutput says what was deleted.
type DeleteOutput struct {
	Deleted int64 `json:"deleted"`
}

func ptr[T any](v T) *T { return &v }

func (s *Server) stats(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, *engine.StoreStats, error) {
	eng, err := s.engine(ctx)
	if err != nil {
		return nil, nil, toolError(err)
	}
	st, err := ops.StoreStats(ctx, eng)
	if err != nil {
		return nil, nil, toolError(err)
	}
	return nil, st, nil
}

func (s *Server) delete(ctx context.Context, _ *mcp.CallToolRequest, in DeleteInput) (*mcp.CallToolResult, DeleteOutput, error) {
	if want := fmt.Sprintf("delete message %d", in.ID); in.Confirm != want {
		return nil, DeleteOutput{}, invalidArg("confirm", fmt.Sprintf("must be exactly %q to delete message %d; nothing was deleted", want, in.ID))
	}
	eng, err := s.engine(ctx)
	if err != nil {
		return nil, DeleteOutput{}, toolError(err)
	}
	if err := eng.DeleteMessage(ctx, in.ID); err != nil {
		return nil, DeleteOutput{}, toolError(err)
	}
	return nil, DeleteOutput{Deleted: in.ID}, nil
}
