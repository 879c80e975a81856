package sqlite

import (
	"context"
	"github.com/cairn-dev/cairn/engine"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLeftoversOfLiveOperationsStay: a backup stage or a restore folder
// held by a running operation is never removed by another open; once
// released (its process gone), the next open removes it, with the archive
// temporary the stage names.
func TestLeftoversOfLiveOperationsStay(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	dir := filepath.Join(parent, "data")
	stage := filepath.Join(dir, backupStagePrefix+"1")
	restoreTmp := filepath.Join(parent, restoreTempPrefix(dir)+"1")
	archiveTmp := filepath.Join(t.TempDir(), ".b.zst.tmp-1")
	for _, d := range []string{stage, restoreTmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(stage, DBFile), []byte("a plaintext copy"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(archiveTmp, []byte("a compressed copy"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stage, stageArchiveFile), []byte(archiveTmp), 0o600); err != nil {
		t.Fatal(err)
	}
	var releases []func()
	for _, p := range []string{stage, restoreTmp} {
		release, err := hold(p)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	open := func() []string {
		e, st, err := OpenEngineStore(ctx, dir, engine.Options{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		return st.RemovedLeftovers()
	}
	if got := open(); len(got) != 0 {
		t.Fatalf("open removed %v, held by a live operation", got)
	}
	for _, p := range []string{stage, restoreTmp, archiveTmp} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	for _, r := range releases {
		r()
	}
	got := open()
	slices.Sort(got)
	want := []string{stage, restoreTmp, archiveTmp}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("open removed %v, want %v", got, want)
	}
	for _, p := range want {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there (%v)", p, err)
		}
	}
}
