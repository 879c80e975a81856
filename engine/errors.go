package engine

import (
	"errors"
	"fmt"
)

// Error classes. Every error the engine returns that a caller can act on
// wraps exactly one of these (branch with errors.Is) or is an *InvalidError
// (branch with errors.As). Each surface maps them once: the CLI to exit
// codes, HTTP to status codes and Chroma error bodies, MCP to tool errors.
var (
	// ErrNotFound: the message, channel, agent or collection does not exist.
	ErrNotFound = errors.New("engine: not found")
	// ErrExists: the thing to create already exists.
	ErrExists = errors.New("engine: already exists")
	// ErrClosed: the Engine was closed.
	ErrClosed = errors.New("engine: closed")
	// ErrCorrupt: a file in the data dir is not readable as what it should be.
	ErrCorrupt = errors.New("engine: corrupt data")
	// ErrIncompatibleFormat: a file was written by a newer cairn or another
	// application.
	ErrIncompatibleFormat = errors.New("engine: incompatible format")
	// ErrDimensionMismatch: a vector's dimension differs from its collection's.
	ErrDimensionMismatch = errors.New("engine: dimension mismatch")
	// ErrEmbedderMismatch: the embedder's model differs from the one the
	// stored vectors were made with.
	ErrEmbedderMismatch = errors.New("engine: embedder mismatch")
)

// InvalidError reports bad input: Field names the input field (for example
// "content", "confidence", "metadata.breadcrumbs.files") and Rule the rule
// it broke, in words a user can act on. Nothing was written.
type InvalidError struct {
	Field string
	Rule  string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("invalid %s: %s", e.Field, e.Rule)
}

func invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Rule: fmt.Sprintf(format, args...)}
}
