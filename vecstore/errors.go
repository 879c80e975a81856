package vecstore

import (
	"errors"
	"fmt"
)

// Error classes. Every error returned by vecstore matches exactly one of these
// with errors.Is, so that surfaces (the Chroma HTTP adapter, MCP, CLI) map a
// class once. The Chroma HTTP status for each class is given in brackets.
var (
	// ErrInvalid: the request is well formed but invalid (Chroma 400 InvalidArgumentError).
	ErrInvalid = errors.New("vecstore: invalid argument")
	// ErrUnprocessable: the request has the wrong shape, e.g. a null or nested metadata
	// value, a negative limit, an unknown include value (Chroma 422 ChromaError).
	ErrUnprocessable = errors.New("vecstore: unprocessable request")
	// ErrNotFound: a tenant, database or collection does not exist (Chroma 404 NotFoundError).
	ErrNotFound = errors.New("vecstore: not found")
	// ErrExists: a tenant, database or collection already exists (Chroma 409 ChromaError).
	ErrExists = errors.New("vecstore: already exists")
	// ErrInternal: an error that Chroma 1.0.0 reports as 500 InternalError
	// (kept for compatibility, e.g. an unknown id in a query's ids filter).
	ErrInternal = errors.New("vecstore: internal error")
	// ErrDimensionMismatch: a vector's length differs from the collection's dimension
	// (Chroma 400 InvalidArgumentError).
	ErrDimensionMismatch = errors.New("vecstore: dimension mismatch")
	// ErrEmbedderMismatch: vectors of one embedding model written to or queried against
	// a collection that holds another model's vectors. Not a Chroma error (400 on that surface).
	ErrEmbedderMismatch = errors.New("vecstore: embedding model mismatch")
	// ErrClosed: the Store was closed.
	ErrClosed = errors.New("vecstore: closed")
	// ErrCorrupt: stored bytes failed a magic, checksum or structure check.
	// Store.Repair rebuilds what can be rebuilt.
	ErrCorrupt = errors.New("vecstore: corrupt data")
	// ErrIncompatibleFormat: the file was written by a newer (or unknown) format version.
	ErrIncompatibleFormat = errors.New("vecstore: incompatible format")
	// ErrUnimplemented: an operation Chroma 1.0.0 single-node refuses (fork) (501).
	ErrUnimplemented = errors.New("vecstore: unimplemented")
	// ErrForbidden: an operation disabled by configuration (reset) (403).
	ErrForbidden = errors.New("vecstore: forbidden")
)

// Error is the concrete error type returned by vecstore operations. Class is one
// of the Err* sentinels above; Message is the exact text Chroma 1.0.0 answers for
// the same request (for errors Chroma also has), suitable for the "message" field
// of a Chroma error body. Err, if not nil, is the underlying cause.
type Error struct {
	Class   error
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return "vecstore: " + e.Message + ": " + e.Err.Error()
	}
	return "vecstore: " + e.Message
}

// Is reports whether target is e's class.
func (e *Error) Is(target error) bool { return target == e.Class }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func newErr(class error, format string, args ...any) *Error {
	return &Error{Class: class, Message: fmt.Sprintf(format, args...)}
}

func invalidf(format string, args ...any) *Error { return newErr(ErrInvalid, format, args...) }

func unprocessablef(format string, args ...any) *Error {
	return newErr(ErrUnprocessable, format, args...)
}

func corruptf(cause error, format string, args ...any) *Error {
	e := newErr(ErrCorrupt, format, args...)
	e.Err = cause
	return e
}

// ErrorMessage returns the Chroma message of err if it is a *Error, else err.Error().
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}
