package vecstore_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files under testdata/")

// openStore opens a store and registers Check and Close in t.Cleanup.
func openStore(t testing.TB, dir string) *vecstore.Store {
	t.Helper()
	s, err := vecstore.Open(context.Background(), dir, vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Check(context.Background()); err != nil && !errors.Is(err, chroma.ErrClosed) {
			t.Errorf("Check: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// fixtureDir returns a new store dir holding a copy of the frozen store
// file fixture, so a test that opens (and may migrate) it leaves the
// fixture as committed.
func fixtureDir(t testing.TB, fixture string) string {
	t.Helper()
	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "vectors.db"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
