package cairnapi

import (
	"errors"
	"fmt"
	"net/http"
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
		if body.Error == "internal" || body.Message != err.Error() {
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
