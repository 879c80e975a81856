package engine

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// Error classes. Every error the engine returns that a caller can act on
// wraps exactly one of these (branch with errors.Is) or is an *InvalidError
// (branch with errors.As): ErrorClasses lists them. Each surface maps them
// once, in one table: the CLI to exit codes (cmd/cairn/cli.go), the cairn
// HTTP API to a status and a JSON error body (cmd/cairn/cairnapi), MCP to
// tool errors (cmd/cairn/mcpserver). Errors of the vector store on the
// engine's own paths are translated into these classes, cause kept.
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
	// ErrDiskFull: a write found no space left on the device holding the
	// data dir (SQLite's SQLITE_FULL, ENOSPC). Nothing of the failed write
	// was kept; reads still work. Its text names no path.
	ErrDiskFull = errors.New("engine: disk full: no space left on the device holding the data dir")
	// ErrNoModel: the operation needs an embedding model and none is
	// configured. It is the no-model case of ErrEmbedderMismatch
	// (errors.Is matches both), so a caller that handles mismatches
	// handles it too; a surface that words it differently tests it first.
	ErrNoModel error = &subclassError{msg: "engine: no embedding model", parent: ErrEmbedderMismatch}
)

// ErrorClasses returns the engine's error sentinels, most specific first
// (ErrNoModel before ErrEmbedderMismatch); *InvalidError is the one class
// that is a type. Adapters' tests check that their one mapping table
// covers every class.
func ErrorClasses() []error {
	return []error{ErrNotFound, ErrExists, ErrClosed, ErrCorrupt, ErrIncompatibleFormat,
		ErrDimensionMismatch, ErrNoModel, ErrEmbedderMismatch, ErrDiskFull}
}

// subclassError is a sentinel that also matches its parent class.
type subclassError struct {
	msg    string
	parent error
}

func (e *subclassError) Error() string        { return e.msg }
func (e *subclassError) Is(target error) bool { return target == e.parent }

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

// VectorStoreError wraps an error of a Chroma store (vecstore, whose
// classes are vecstore/chroma's) with the engine class of its class (the
// cause stays in the chain); other errors are returned as they are.
func VectorStoreError(err error) error {
	var class error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, chroma.ErrNotFound):
		class = ErrNotFound
	case errors.Is(err, chroma.ErrExists):
		class = ErrExists
	case errors.Is(err, chroma.ErrClosed):
		class = ErrClosed
	case errors.Is(err, chroma.ErrCorrupt):
		class = ErrCorrupt
	case errors.Is(err, chroma.ErrIncompatibleFormat):
		class = ErrIncompatibleFormat
	case errors.Is(err, chroma.ErrDimensionMismatch):
		class = ErrDimensionMismatch
	case errors.Is(err, chroma.ErrEmbedderMismatch):
		class = ErrEmbedderMismatch
	case errors.Is(err, syscall.ENOSPC):
		class = ErrDiskFull
	default:
		return err
	}
	if errors.Is(err, class) {
		return err
	}
	return fmt.Errorf("%w: %w", class, err)
}
