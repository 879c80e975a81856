package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/enginetest"
	"github.com/cairn-dev/cairn/internal/rawscan"
)

// filesContaining returns the files under dir whose raw bytes contain marker.
func filesContaining(t *testing.T, dir, marker string) []string {
	t.Helper()
	hits, err := rawscan.FilesContaining(dir, marker)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// backupContains reports whether the decompressed backup archive holds marker.
func backupContains(t *testing.T, archive, marker string) bool {
	t.Helper()
	zr := enginetest.OpenArchive(t, archive)
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(b, []byte(marker))
}

// TestFaultDeletedMessageLeavesDataDir: once DeleteMessage returns, no
// byte of the deleted text is in any file of the data dir (SQLite file,
// WAL, FTS5 segments) while the engine is still open, as a kill -9 right
// after the acknowledgement would leave it; a backup taken afterwards
// holds none either, and neither does the dir after a GC that selects
// nothing or a rebuild.
func TestFaultDeletedMessageLeavesDataDir(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := enginetest.OpenEngineWith(ctx, dir, engine.Options{}, sqlite.Options{VectorStore: sqlite.VectorStoreOptions{Open: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	marker := "zqxdeletedmarker"
	var victim int64
	for i := range 200 {
		content := fmt.Sprintf("ordinary note number %d about build caches", i)
		if i == 100 {
			content = "the password hint is " + marker + " keep it quiet"
		}
		res, err := e.WriteNote(ctx, engine.NewNote{Agent: "ann", Content: content})
		if err != nil {
			t.Fatal(err)
		}
		if i == 100 {
			victim = res.ID
		}
	}
	if len(filesContaining(t, dir, marker)) == 0 {
		t.Fatal("marker not on disk before the delete: the test proves nothing")
	}
	if err := e.DeleteMessage(ctx, victim); err != nil {
		t.Fatal(err)
	}
	if hits := filesContaining(t, dir, marker); len(hits) != 0 {
		t.Fatalf("after an acknowledged delete, the deleted text is still in %v", hits)
	}
	archive := filepath.Join(t.TempDir(), "after.cairn-backup")
	if _, err := ops.Backup(ctx, e, archive, engine.BackupOptions{}); err != nil {
		t.Fatal(err)
	}
	if backupContains(t, archive, marker) {
		t.Fatal("a backup taken after the delete holds the deleted text")
	}
	if _, err := ops.GC(ctx, e, ops.GCOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Rebuild(ctx, e, ops.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
	if hits := filesContaining(t, dir, marker); len(hits) != 0 {
		t.Fatalf("after gc and rebuild, the deleted text is in %v", hits)
	}
	t.Logf("fault counts: bytes of deleted text found = 0 (%d files scanned twice, 1 backup)", countFiles(t, dir))
}

func countFiles(t *testing.T, dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}
