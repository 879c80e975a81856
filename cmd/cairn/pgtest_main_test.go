package main

import (
	"os"
	"testing"

	"github.com/cairn-dev/cairn/internal/pgtest"
)

// TestMain stops the PostgreSQL server the --store tests start (pgtest).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
