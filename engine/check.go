package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Check verifies the store: its own checks of its files (Store.Integrity:
// on the data dir SQLite's quick_check, the foreign keys, the channel
// counters and FTS5's integrity check) and the consistency report
// (Consistency: the keyword index and every vector set against the
// messages). It returns an error wrapping ErrCorrupt describing the
// problems found; a consistency report that cannot be read is one.
func (e *Engine) Check(ctx context.Context) error {
	done, err := e.enterStore()
	if err != nil {
		return err
	}
	defer done()
	problems, err := e.store.Integrity(ctx)
	if err != nil {
		return err
	}
	rep, err := e.consistencyLocked(ctx)
	if err != nil {
		problems = append(problems, err.Error())
	} else {
		for _, p := range rep.Problems {
			if !slices.Contains(problems, p) { // FTS5's integrity is in both
				problems = append(problems, p)
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
}
