package where

import "errors"

// ErrInvalid is the class of every parse and validation error of this
// package (errors.Is(err, ErrInvalid)).
var ErrInvalid = errors.New("where: invalid filter")

// Clause names the language an Error is about, as the request field that
// carries it.
type Clause string

const (
	ClauseWhere    Clause = "where"
	ClauseDocument Clause = "where_document"
)

// Error is an invalid filter: which clause, the rule it breaks (Reason, in
// words, for logs and cairn's own surfaces) and, for a regular expression
// that does not compile, the Pattern and the compiler's error as the cause.
type Error struct {
	Clause  Clause
	Key     string // the metadata key involved, when one is
	Reason  string
	Pattern string // the refused regular expression ($regex, $not_regex)
	Err     error  // cause: the JSON syntax or regexp error
}

func (e *Error) Error() string {
	s := "where: invalid " + string(e.Clause) + ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is makes every *Error match ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func whereErr(reason string) *Error { return &Error{Clause: ClauseWhere, Reason: reason} }

func docErr(reason string) *Error { return &Error{Clause: ClauseDocument, Reason: reason} }
