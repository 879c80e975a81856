package claudecode_test

import (
	"regexp"
	"testing"

	"github.com/cairn-dev/cairn/engine/claudecode"
)

// TestValidUUID checks ValidUUID against the regexp that states the form.
func TestValidUUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	for _, s := range []string{
		"", "0d3c1b8e-2f4a-4c6b-9e8d-7a6b5c4d3e2f", "0D3C1B8E-2F4A-4C6B-9E8D-7A6B5C4D3E2F",
		"0d3c1b8e-2f4a-4c6b-9e8d-7a6b5c4d3e2", "0d3c1b8e-2f4a-4c6b-9e8d-7a6b5c4d3e2f0",
		"0d3c1b8e2f4a-4c6b-9e8d-7a6b5c4d3e2f-", "0d3c1b8g-2f4a-4c6b-9e8d-7a6b5c4d3e2f",
		"0d3c1b8e-2f4a-4c6b-9e8d_7a6b5c4d3e2f", "------------------------------------",
		"0d3c1b8e-2f4a-4c6b-9e8d-7a6b5c4d3é2",
	} {
		if got, want := claudecode.ValidUUID(s), re.MatchString(s); got != want {
			t.Errorf("ValidUUID(%q) = %v, want %v", s, got, want)
		}
	}
}
