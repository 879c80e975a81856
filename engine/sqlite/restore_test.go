package sqlite_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/enginetest"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/klauspost/compress/zstd"
)

func TestRestoreRejectsDamage(t *testing.T) {
	ctx := context.Background()
	e := enginetest.OpenIn(t, "", engine.Options{})
	enginetest.AgedNote(t, e, "a", "something worth keeping", time.Hour, 0.7, "", "")
	archive := filepath.Join(t.TempDir(), "b.zst")
	if _, err := ops.Backup(ctx, e, archive, engine.BackupOptions{}); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(archive)

	cases := map[string][]byte{}
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x40
	cases["flipped byte"] = flipped
	cases["truncated"] = good[:len(good)*2/3]
	cases["not zstd"] = []byte("hello")
	cases["path escape"] = craftArchive(t, []engine.BackupFile{{Path: "../evil", Size: 4}}, map[string]string{"../evil": "evil"})
	cases["checksum mismatch"] = craftArchive(t, []engine.BackupFile{{Path: "cairn.db", Size: 4, SHA256: hexSum("nope")}}, map[string]string{"cairn.db": "evil"})
	cases["extra file"] = craftArchive(t, nil, map[string]string{"cairn.db": "evil"})
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bad.zst")
			os.WriteFile(p, data, 0o644)
			if _, err := sqlite.VerifyBackup(ctx, p); !errors.Is(err, engine.ErrCorrupt) {
				t.Errorf("verify: %v, want ErrCorrupt", err)
			}
			parent := t.TempDir()
			dir := filepath.Join(parent, "r")
			if _, err := sqlite.Restore(ctx, p, dir, sqlite.RestoreOptions{}); !errors.Is(err, engine.ErrCorrupt) {
				t.Errorf("restore: %v, want ErrCorrupt", err)
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("restore wrote %v", ents)
			}
		})
	}
	newer := craftArchiveManifest(t, map[string]any{"magic": "cairn-backup", "version": 99, "files": []any{}})
	p := filepath.Join(t.TempDir(), "newer.zst")
	os.WriteFile(p, newer, 0o644)
	if _, err := sqlite.VerifyBackup(ctx, p); !errors.Is(err, engine.ErrIncompatibleFormat) {
		t.Errorf("newer backup: %v", err)
	}
}

func hexSum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// craftArchive builds a backup by hand; files with an empty checksum get the
// right one.
func craftArchive(t testing.TB, files []engine.BackupFile, contents map[string]string) []byte {
	for i := range files {
		if files[i].SHA256 == "" {
			files[i].SHA256 = hexSum(contents[files[i].Path])
		}
	}
	if files == nil {
		files = []engine.BackupFile{}
	}
	m := map[string]any{"magic": "cairn-backup", "version": 1, "engine_format": 1, "files": files}
	return craftArchiveManifest(t, m, contents)
}

func craftArchiveManifest(t testing.TB, m map[string]any, contents ...map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := zstd.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	mj, _ := json.Marshal(m)
	tw.WriteHeader(&tar.Header{Name: sqlite.ManifestName, Mode: 0o644, Size: int64(len(mj)), Typeflag: tar.TypeReg})
	tw.Write(mj)
	for _, c := range contents {
		for name, body := range c {
			tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
			tw.Write([]byte(body))
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func FuzzVerifyBackup(f *testing.F) {
	f.Add(craftArchive(f, []engine.BackupFile{{Path: "cairn.db", Size: 4}}, map[string]string{"cairn.db": "abcd"}))
	f.Add([]byte("(\xb5/\xfd"))
	f.Add([]byte{})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "fuzz.zst")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := sqlite.VerifyBackup(context.Background(), p)
		if err != nil && !errors.Is(err, engine.ErrCorrupt) && !errors.Is(err, engine.ErrIncompatibleFormat) {
			t.Fatalf("error outside the classes: %v", err)
		}
	})
}

// frozenBackup is a backup in format version 1, kept forever: every later
// cairn must verify and restore it. Regenerate only for a new format
// version (CAIRN_WRITE_BACKUP_FIXTURE=1 go test -run TestFrozenBackupV1).
const frozenBackup = "testdata/backup-v1.cairn.zst"

const frozenSession = "f0f0f0f0-1111-4222-8333-444455556666"

func TestFrozenBackupV1(t *testing.T) {
	ctx := context.Background()
	if os.Getenv("CAIRN_WRITE_BACKUP_FIXTURE") == "1" {
		e := enginetest.OpenIn(t, "", engine.Options{})
		enginetest.AgedNote(t, e, "fixture", "frozen backup fixture note", time.Hour, 0.8, engine.TypeDecision, `{"pinned": true}`)
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, frozenSession+".jsonl"), []byte(`{"type":"user","uuid":"a0a0a0a0-1111-4222-8333-444455556666","parentUuid":null,"sessionId":"`+frozenSession+`","timestamp":"2026-01-05T09:00:00.000Z","message":{"role":"user","content":"frozen session text"}}`+"\n"), 0o644)
		if _, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: dir}); err != nil {
			t.Fatal(err)
		}
		os.MkdirAll("testdata", 0o755)
		if _, err := ops.Backup(ctx, e, frozenBackup, engine.BackupOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := sqlite.VerifyBackup(ctx, frozenBackup)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 1 {
		t.Fatalf("fixture version %d", m.Version)
	}
	dir := filepath.Join(t.TempDir(), "r")
	if _, err := sqlite.Restore(ctx, frozenBackup, dir, sqlite.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	e := enginetest.OpenIn(t, dir, engine.Options{})
	notes, err := e.GetAgentNotes(ctx, "fixture", "", 10)
	if err != nil || len(notes) != 1 || notes[0].Content != "frozen backup fixture note" {
		t.Errorf("notes %+v %v", notes, err)
	}
	recs, err := ingest.SessionRecords(ctx, e, frozenSession)
	if err != nil || len(recs) != 1 || recs[0].Text != "frozen session text" {
		t.Errorf("session %+v %v", recs, err)
	}
}
