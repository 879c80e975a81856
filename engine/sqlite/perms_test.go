//go:build unix

package sqlite_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestFaultPrivateFileModes: under the common umask 022 a new data dir is
// 0700 and every file cairn writes in it (database, WAL, vectors, lock
// files), backups and restored dirs are 0600/0700: no other local user can
// read memory. A stricter umask narrows exports further, never widens.
func TestFaultPrivateFileModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	e, err := enginetest.OpenEngineWith(ctx, dir, engine.Options{}, sqlite.Options{VectorStore: sqlite.VectorStoreOptions{Open: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.WriteNote(ctx, engine.NewNote{Agent: "ann", Content: "private note"}); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "b.cairn-backup")
	if _, err := ops.Backup(ctx, e, archive, engine.BackupOptions{}); err != nil {
		t.Fatal(err)
	}
	checkModes(t, dir)
	checkModes(t, archive)
	restored := filepath.Join(t.TempDir(), "restored")
	if _, err := sqlite.Restore(ctx, archive, restored, sqlite.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	checkModes(t, restored)
	// Exports: the folders they create, messages/ included, and the files.
	exported := filepath.Join(t.TempDir(), "exports", "today")
	if _, err := ingest.ExportMessages(ctx, e, ingest.MessageExportOptions{OutDir: exported}); err != nil {
		t.Fatal(err)
	}
	checkModes(t, filepath.Dir(exported))

	// A dir its owner opened up is left as it is, and check says so.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rep, err := ops.Consistency(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "0755") {
		t.Fatalf("check warnings %q, want one about the dir's mode 0755", rep.Warnings)
	}

	syscall.Umask(0o277)
	name := filepath.Join(t.TempDir(), "x")
	if err := ingest.WriteFileAtomic(name, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != 0o400 {
		t.Fatalf("under umask 0277 WriteFileAtomic(0644) made %v (%v), want 0400", fi.Mode().Perm(), err)
	}
}

func checkModes(t *testing.T, root string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d entries checked", root, n)
}
