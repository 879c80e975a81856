package main

import (
	"os"
	"testing"

	"github.com/cairn-dev/cairn/internal/pgtest"
)

// TestMain stops the PostgreSQL server the --store tests start (pgtest)
// and removes the generated test model shared by the package's tests.
func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if tinyModelDir != "" {
		os.RemoveAll(tinyModelDir)
	}
	os.Exit(code)
}
