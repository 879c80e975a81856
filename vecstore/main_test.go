package vecstore_test

import (
	"os"
	"testing"
)

// TestMain lets a test re-execute the test binary as a helper process (a
// writer killed with SIGKILL, or one of the multi-process workers): the
// helper role is selected by the VECSTORE_HELPER environment variable.
func TestMain(m *testing.M) {
	if role := os.Getenv("VECSTORE_HELPER"); role != "" {
		os.Exit(runHelper(role))
	}
	os.Exit(m.Run())
}
