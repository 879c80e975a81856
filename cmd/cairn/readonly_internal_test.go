package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/engine/sqlite"
)

// TestOneShotSearchWritesNothing: `cairn search`, `cairn notes` and `cairn
// stats` leave the database file byte for byte as it was, with no WAL left.
func TestOneShotSearchWritesNothing(t *testing.T) {
	data := t.TempDir()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data, "HOME": t.TempDir()})
	for _, text := range []string{"flaky parser tests", "the parser is fixed"} {
		if _, errOut, code := runCLI(t, getenv, "", "note", "--agent", "ann", text); code != 0 {
			t.Fatalf("note: exit %d: %s", code, errOut)
		}
	}
	unchanged := dbUnchanged(t, filepath.Join(data, sqlite.DBFile))
	for _, args := range [][]string{{"search", "parser"}, {"search", "--mode", "keyword", "fixed"}, {"notes", "--agent", "ann"}, {"stats"}} {
		if _, errOut, code := runCLI(t, getenv, "", args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	unchanged("the reads")
}

// dbUnchanged records the database file db and returns a check that it is
// byte for byte as it was, with its mtime, and no WAL holds anything: what
// did names what ran in between.
func dbUnchanged(t *testing.T, db string) func(what string) {
	t.Helper()
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	return func(what string) {
		t.Helper()
		after, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		fa, err := os.Stat(db)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) || !fa.ModTime().Equal(fi.ModTime()) {
			t.Errorf("%s changed %s (mtime %v -> %v)", what, db, fi.ModTime(), fa.ModTime())
		}
		if wal, err := os.Stat(db + "-wal"); err == nil && wal.Size() > 0 {
			t.Errorf("WAL holds %d bytes after %s", wal.Size(), what)
		}
	}
}
