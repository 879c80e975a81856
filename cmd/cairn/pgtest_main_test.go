package main

import (
	"os"
	"testing"

	"github.com/cairn-dev/cairn/internal/pgtest"
)

// TestMain stops the PostgreSQL server the --store tests start (pgtest)
// and removes the generated test model and the binary shared by the
// package's tests.
func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	for _, dir := range []string{tinyModelDir, cairnBinDir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}
