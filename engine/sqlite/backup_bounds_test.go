package sqlite_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestFaultRestoreBomb: an archive whose manifest and checksums are valid
// but which expands a few KB into megabytes of zeros (a model file) is
// refused by restore and verify before anything is written, naming the
// entry and the limit.
func TestFaultRestoreBomb(t *testing.T) {
	ctx := context.Background()
	e := enginetest.OpenIn(t, "", engine.Options{})
	enginetest.AgedNote(t, e, "a", "a note to keep", time.Hour, 0.7, "", "")
	archive := filepath.Join(t.TempDir(), "b.zst")
	if _, err := ops.Backup(ctx, e, archive, engine.BackupOptions{}); err != nil {
		t.Fatal(err)
	}
	const bomb = "models/x/model.safetensors"
	bombed := addZeros(t, archive, bomb, 8<<20)
	if fi, _ := os.Stat(bombed); fi.Size() > 1<<20 {
		t.Fatalf("the bomb is %d bytes, want a small archive", fi.Size())
	}
	parent := t.TempDir()
	_, err := sqlite.Restore(ctx, bombed, filepath.Join(parent, "r"), sqlite.RestoreOptions{})
	var inv *engine.InvalidError
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), bomb) || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("restore of a bomb: %v, want an invalid-input error naming %s and the limit", err, bomb)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("restore wrote %v", ents)
	}
	if _, err := sqlite.VerifyBackup(ctx, bombed); !errors.As(err, &inv) {
		t.Errorf("verify of a bomb: %v, want an invalid-input error", err)
	}
	// The same archive with a higher limit restores: the bound is the
	// expansion, not the entry.
	if _, err := sqlite.Restore(ctx, bombed, filepath.Join(parent, "r2"), sqlite.RestoreOptions{MaxExpansion: 1 << 20}); err != nil {
		t.Fatalf("restore with a raised limit: %v", err)
	}
}

// addZeros writes a copy of archive with one more file of n zero bytes at
// rel (manifest updated, valid checksum) and returns its path.
func addZeros(t *testing.T, archive, rel string, n int) string {
	t.Helper()
	manifest, files, contents := readArchive(t, archive)
	zeros := string(make([]byte, n))
	files = append(files, engine.BackupFile{Path: rel, Size: int64(n), SHA256: hexSum(zeros)})
	contents[rel] = zeros
	return writeArchive(t, manifest, files, contents)
}

// rewriteEntry writes a copy of archive whose file rel is edit's result,
// with a manifest that matches it, and returns its path.
func rewriteEntry(t *testing.T, archive, rel string, edit func([]byte) []byte) string {
	t.Helper()
	manifest, files, contents := readArchive(t, archive)
	b := string(edit([]byte(contents[rel])))
	contents[rel] = b
	for i := range files {
		if files[i].Path == rel {
			files[i].Size, files[i].SHA256 = int64(len(b)), hexSum(b)
		}
	}
	return writeArchive(t, manifest, files, contents)
}

func writeArchive(t *testing.T, manifest map[string]any, files []engine.BackupFile, contents map[string]string) string {
	t.Helper()
	manifest["files"] = files
	var ordered []map[string]string
	for _, bf := range files {
		ordered = append(ordered, map[string]string{bf.Path: contents[bf.Path]})
	}
	out := filepath.Join(t.TempDir(), "crafted.zst")
	if err := os.WriteFile(out, craftArchiveManifest(t, manifest, ordered...), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// readArchive returns a backup's manifest fields, files and contents.
func readArchive(t *testing.T, archive string) (map[string]any, []engine.BackupFile, map[string]string) {
	t.Helper()
	tr := tar.NewReader(enginetest.OpenArchive(t, archive))
	var manifest map[string]any
	contents := map[string]string{}
	var files []engine.BackupFile
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name == sqlite.ManifestName {
			var m engine.BackupManifest
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			files = m.Files
			manifest = map[string]any{"magic": m.Magic, "version": m.Version, "engine_format": m.EngineFormat}
			continue
		}
		contents[hdr.Name] = string(b)
	}
	return manifest, files, contents
}

// TestVerifyBackupChecksVectors: verify checks the whole backup, the vector
// store included: a healthy backup of a store with message vectors verifies
// clean, and one whose vector file's header is damaged is refused (as
// restore refuses it), where serving it would fail.
func TestVerifyBackupChecksVectors(t *testing.T) {
	ctx := context.Background()
	e := enginetest.OpenIn(t, "", engine.Options{Embedder: enginetest.NewHashEmbedder("hash-8", 8)})
	enginetest.AgedNote(t, e, "a", "a note with a vector", time.Hour, 0.7, "", "")
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "b.zst")
	if _, err := ops.Backup(ctx, e, archive, engine.BackupOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.VerifyBackup(ctx, archive); err != nil {
		t.Fatalf("verify of a healthy backup with vectors: %v", err)
	}
	damaged := rewriteEntry(t, archive, sqlite.VectorsDir+"/vectors.db", func(b []byte) []byte {
		return bytes.ReplaceAll(b, []byte("cairn-vecstore"), []byte("XXXXX-vecstore"))
	})
	if _, err := sqlite.VerifyBackup(ctx, damaged); !errors.Is(err, engine.ErrCorrupt) {
		t.Errorf("verify of a backup with a damaged vector file: %v, want ErrCorrupt", err)
	}
	if _, err := sqlite.Restore(ctx, damaged, filepath.Join(t.TempDir(), "r"), sqlite.RestoreOptions{}); !errors.Is(err, engine.ErrCorrupt) {
		t.Errorf("restore of a backup with a damaged vector file: %v, want ErrCorrupt", err)
	}
}
