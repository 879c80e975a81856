package embed

import "errors"

// Sentinel errors; returned errors wrap them with context (branch with errors.Is).
var (
	// ErrBadModel reports a model directory or weight file that is malformed or inconsistent.
	ErrBadModel = errors.New("embed: bad model")
	// ErrUnsupported reports a model the selected backend cannot run.
	ErrUnsupported = errors.New("embed: unsupported model")
	// ErrClosed is returned by Embed after Close.
	ErrClosed = errors.New("embed: model closed")
	// ErrTooLong is returned when a text exceeds the maximum length and Options.Overflow is OverflowError.
	ErrTooLong = errors.New("embed: text too long")
	// ErrNoModel is returned when no model directory can be found.
	ErrNoModel = errors.New("embed: no model")
)
