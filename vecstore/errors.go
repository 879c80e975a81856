package vecstore

import (
	"fmt"

	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// corruptf is the refusal of damaged data: stored bytes that failed a
// magic, checksum or structure check.
func corruptf(cause error, format string, args ...any) *chroma.Error {
	return &chroma.Error{Class: chroma.ErrCorrupt, Rule: chroma.RuleCorrupt, Reason: fmt.Sprintf(format, args...), Err: cause}
}
