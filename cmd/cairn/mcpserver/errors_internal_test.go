package mcpserver

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
)

// TestToolErrorsCoverEveryClass: every engine error class has its own code
// in toolErrorCodes, and the tool error keeps the whole chain and text.
func TestToolErrorsCoverEveryClass(t *testing.T) {
	for _, class := range engine.ErrorClasses() {
		err := fmt.Errorf("message id 7: %w", class)
		got := toolError(err)
		var te *ToolError
		if !errors.As(got, &te) || te.Code == "internal" || !errors.Is(got, class) || !strings.HasSuffix(got.Error(), ": "+err.Error()) {
			t.Errorf("%v: %v", class, got)
		}
	}
	inv := toolError(fmt.Errorf("arguments: %w", &engine.InvalidError{Field: "limit", Rule: "must be >= 0"}))
	var te *ToolError
	if !errors.As(inv, &te) || te.Code != "invalid_argument" || te.Field != "limit" || inv.Error() != "invalid_argument: arguments: invalid limit: must be >= 0" {
		t.Errorf("invalid: %v", inv)
	}
	if toolError(nil) != nil {
		t.Error("toolError(nil) != nil")
	}
}
