package mcpserver

import (
	"context"
	"errors"

	"github.com/cairn-dev/cairn/engine"
)

// ToolError is what every failed tool call returns: the class of the
// error (Code) in front of its own text, chain kept (Unwrap). The MCP SDK
// sends it as a tool error (isError) whose text an agent reads, for
// example "invalid_argument: invalid limit: must be ..." or "not_found:
// message id 7: engine: not found".
type ToolError struct {
	Code string
	// Field names the offending argument for invalid_argument.
	Field string
	Err   error
}

func (e *ToolError) Error() string { return e.Code + ": " + e.Err.Error() }
func (e *ToolError) Unwrap() error { return e.Err }

// toolErrorCodes is this surface's one mapping of the engine's error
// classes (engine.ErrorClasses) to tool error codes, most specific first.
// The codes are those of the cairn HTTP API's error bodies.
func toolErrorCodes() []struct {
	class error
	code  string
} {
	return []struct {
		class error
		code  string
	}{
		{engine.ErrNotFound, "not_found"},
		{engine.ErrExists, "already_exists"},
		{engine.ErrNoModel, "no_model"},
		{engine.ErrEmbedderMismatch, "embedder_mismatch"},
		{engine.ErrDimensionMismatch, "dimension_mismatch"},
		{engine.ErrClosed, "unavailable"},
		{context.Canceled, "unavailable"},
		{context.DeadlineExceeded, "unavailable"},
		{engine.ErrCorrupt, "corrupt"},
		{engine.ErrIncompatibleFormat, "incompatible_format"},
		{engine.ErrDiskFull, "disk_full"},
	}
}

// toolError classifies err for the agent (nil stays nil).
func toolError(err error) error {
	if err == nil {
		return nil
	}
	var te *ToolError
	if errors.As(err, &te) {
		return err
	}
	var inv *engine.InvalidError
	if errors.As(err, &inv) {
		return &ToolError{Code: "invalid_argument", Field: inv.Field, Err: err}
	}
	for _, c := range toolErrorCodes() {
		if errors.Is(err, c.class) {
			return &ToolError{Code: c.code, Err: err}
		}
	}
	return &ToolError{Code: "internal", Err: err}
}

// invalidArg is bad input a tool checks itself (before the engine).
func invalidArg(field, rule string) error {
	return toolError(&engine.InvalidError{Field: field, Rule: rule})
}
