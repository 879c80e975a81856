package cairnapi

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/cairn-dev/cairn/engine/ops"
)

// GCInput is the body of POST /gc.
type GCInput struct {
	// DryRun reports what would be forgotten and changes nothing.
	DryRun bool `json:"dry_run"`
	// ExpectMessages and ExpectSessions, on a real run, are the message
	// and session ids a dry run listed: when gc would now forget anything
	// else, nothing is deleted and the answer is 409 conflict, so what a
	// person reviewed is what goes. Absent: no check.
	ExpectMessages []int64  `json:"expect_messages,omitempty"`
	ExpectSessions []string `json:"expect_sessions,omitempty"`
}

// errConflict marks a real gc whose plan differs from the reviewed one.
var errConflict = errors.New("the gc plan changed since the dry run")

// gc runs retention with the server's policies (Options.GC).
func (h *Handler) gc(r *http.Request) (any, int, error) {
	var in GCInput
	if err := h.decode(r, &in); err != nil {
		return nil, 0, err
	}
	opts := h.opts.GC
	opts.Progress = nil
	eng := h.opts.Engine
	if !in.DryRun && (in.ExpectMessages != nil || in.ExpectSessions != nil) {
		dry := opts
		dry.DryRun = true
		plan, err := ops.GC(r.Context(), eng, dry)
		if err != nil {
			return nil, 0, err
		}
		var msgs []int64
		for _, m := range plan.Messages {
			msgs = append(msgs, m.ID)
		}
		var sess []string
		for _, s := range plan.Sessions {
			sess = append(sess, s.ID)
		}
		if !sameSet(msgs, in.ExpectMessages) || !sameSet(sess, in.ExpectSessions) {
			return nil, 0, fmt.Errorf("%w: it would now forget %d messages and %d sessions, not the %d and %d reviewed; nothing was deleted: run a dry run again",
				errConflict, len(msgs), len(sess), len(in.ExpectMessages), len(in.ExpectSessions))
		}
	}
	opts.DryRun = in.DryRun
	rep, err := ops.GC(r.Context(), eng, opts)
	if err != nil {
		return nil, 0, err
	}
	return rep, http.StatusOK, nil
}

// sameSet reports whether a and b hold the same values, ignoring order.
func sameSet[T interface{ ~int64 | ~string }](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
