package cairnapi

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/engine"
)

// TestErrorStatusesCoverEveryClass: every engine error class, wrapped as
// the engine wraps it, has its own row in errorStatuses (never the
// internal fallback), and the body's message is the error's own text.
func TestErrorStatusesCoverEveryClass(t *testing.T) {
	for _, class := range engine.ErrorClasses() {
		err := fmt.Errorf("message id 7: %w", class)
		status, body := statusOf(err)
		if body.Error == "internal" || (body.Message != err.Error() && class != engine.ErrDiskFull) {
			t.Errorf("%v: %d %+v", class, status, body)
		}
	}
	// The no-model case is told apart from other mismatches.
	if _, body := statusOf(fmt.Errorf("x: %w", engine.ErrNoModel)); body.Error != "no_model" {
		t.Errorf("no model: %+v", body)
	}
	inv := fmt.Errorf("import line 3: %w", &engine.InvalidError{Field: "limit", Rule: "must be >= 0"})
	if status, body := statusOf(inv); status != http.StatusBadRequest || body.Field != "limit" {
		t.Errorf("invalid: %d %+v", status, body)
	}
	if status, body := statusOf(errors.New("boom")); status != http.StatusInternalServerError || body.Error != "internal" {
		t.Errorf("other: %d %+v", status, body)
	}
}

// TestDiskFullAnswer: a write that found the disk full answers 507
// disk_full with a message naming no path, whatever the cause's text.
func TestDiskFullAnswer(t *testing.T) {
	cause := &os.PathError{Op: "write", Path: "/home/someone/.local/share/cairn/cairn.db-wal", Err: syscall.ENOSPC}
	status, body := statusOf(fmt.Errorf("engine: store message: %w: %w", engine.ErrDiskFull, cause))
	if status != http.StatusInsufficientStorage || body.Error != "disk_full" || strings.Contains(body.Message, "/") ||
		!strings.Contains(body.Message, "disk full") {
		t.Errorf("disk full: %d %+v", status, body)
	}
}
