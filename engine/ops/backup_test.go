package ops_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/enginetest"
	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

func TestBackupRestore(t *testing.T) {
	ctx := context.Background()
	tree := enginetest.SessionTree(t, 21)
	e := enginetest.OpenIn(t, "", engine.Options{})
	if _, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: tree.Root, Redactor: enginetest.DefaultRedactor(t)}); err != nil {
		t.Fatal(err)
	}
	enginetest.AgedNote(t, e, "a", "a note to keep", time.Hour, 0.7, "", "")
	if err := os.WriteFile(filepath.Join(e.Dir(), "config.toml"), []byte("[import]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(e.Dir(), "vectors"), 0o755)
	os.WriteFile(filepath.Join(e.Dir(), "vectors", "live.db"), []byte("live bbolt"), 0o644)
	archive := filepath.Join(t.TempDir(), "b.cairn.zst")
	// A vector store nobody snapshots is refused rather than copied live.
	if _, err := ops.Backup(ctx, e, archive, engine.BackupOptions{}); err == nil {
		t.Fatal("backup copied a live vector store")
	}
	// Vectors are derived data: a backup may leave them out.
	skipped := filepath.Join(t.TempDir(), "novec.zst")
	ms, err := ops.Backup(ctx, e, skipped, engine.BackupOptions{SkipVectors: true})
	if err != nil || !ms.VectorsSkipped {
		t.Fatalf("backup without vectors: %v %+v", err, ms)
	}
	for _, f := range ms.Files {
		if strings.HasPrefix(f.Path, "vectors/") {
			t.Errorf("skipped vectors but archived %s", f.Path)
		}
	}
	src := engine.SnapshotSource{Path: "vectors/live.db", Write: func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, "consistent vector snapshot")
		return err
	}}
	m, err := ops.Backup(ctx, e, archive, engine.BackupOptions{Sources: []engine.SnapshotSource{src}})
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for _, f := range m.Files {
		paths[f.Path] = true
	}
	for _, want := range []string{sqlite.DBFile, "config.toml", "vectors/live.db"} {
		if !paths[want] {
			t.Errorf("backup lacks %s: %+v", want, m.Files)
		}
	}
	if _, err := sqlite.VerifyBackup(ctx, archive); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "restored")
	if _, err := sqlite.Restore(ctx, archive, dir, sqlite.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "vectors", "live.db")); string(b) != "consistent vector snapshot" {
		t.Errorf("vector snapshot restored as %q", b)
	}
	r := enginetest.OpenIn(t, dir, engine.Options{})
	for _, s := range tree.Sessions {
		var a, b bytes.Buffer
		if err := ingest.WriteSessionJSONL(ctx, e, s.ID, &a); err != nil {
			t.Fatal(err)
		}
		if err := ingest.WriteSessionJSONL(ctx, r, s.ID, &b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("session %s differs after restore", s.ID)
		}
	}
	// Restore refuses a non-empty target.
	if _, err := sqlite.Restore(ctx, archive, dir, sqlite.RestoreOptions{}); !errors.Is(err, engine.ErrExists) {
		t.Errorf("restore over a store: %v", err)
	}
	// The archive may not live in the data dir.
	if _, err := ops.Backup(ctx, e, filepath.Join(e.Dir(), "x.zst"), engine.BackupOptions{Sources: []engine.SnapshotSource{src}}); err == nil {
		t.Error("backup into the data dir accepted")
	}
}

// TestBackupWhileWriting takes a backup while writers commit notes, and
// checks that the restored store is consistent: it passes its check and
// holds, for every writer, exactly a prefix of what that writer committed.
func TestBackupWhileWriting(t *testing.T) {
	ctx := context.Background()
	e := enginetest.OpenIn(t, "", engine.Options{Now: time.Now})
	const writers = 3
	var stop atomic.Bool
	var wg sync.WaitGroup
	committed := make([]atomic.Int64, writers)
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				_, err := e.WriteNote(ctx, engine.NewNote{Agent: fmt.Sprintf("w%d", w), Content: fmt.Sprintf("writer %d note %06d with some text to index", w, i)})
				if err != nil {
					errs <- err
					return
				}
				committed[w].Store(int64(i + 1))
			}
		}()
	}
	for committed[0].Load() < 50 {
		time.Sleep(5 * time.Millisecond)
	}
	archive := filepath.Join(t.TempDir(), "live.zst")
	var before [writers]int64
	for w := range writers {
		before[w] = committed[w].Load()
	}
	_, err := ops.Backup(ctx, e, archive, engine.BackupOptions{})
	var after [writers]int64
	for w := range writers {
		after[w] = committed[w].Load()
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "r")
	if _, err := sqlite.Restore(ctx, archive, dir, sqlite.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	r := enginetest.OpenIn(t, dir, engine.Options{})
	for w := range writers {
		notes, err := r.GetAgentNotes(ctx, fmt.Sprintf("w%d", w), "", engine.MaxLimit)
		if err != nil {
			t.Fatal(err)
		}
		n := int64(len(notes))
		if n < before[w] || n > after[w] {
			t.Errorf("writer %d: restored %d notes, committed %d before and %d after the backup", w, n, before[w], after[w])
		}
		have := map[string]bool{}
		for _, m := range notes {
			have[m.Content] = true
		}
		for i := range n {
			if !have[fmt.Sprintf("writer %d note %06d with some text to index", w, i)] {
				t.Errorf("writer %d: note %d missing while later ones are present", w, i)
				break
			}
		}
	}
}

// TestBackupIncludesVectors backs up a store with message vectors and a
// Chroma collection: the restored store answers semantic queries and holds
// the collection's records, with nothing re-embedded.
func TestBackupIncludesVectors(t *testing.T) {
	ctx := context.Background()
	emb := enginetest.NewHashEmbedder("hash-v1", 16)
	dir := t.TempDir()
	e, err := enginetest.OpenEngine(ctx, dir, engine.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"retry uploads with backoff", "pin the bindings version", "vacuum after deletes"} {
		if _, err := e.StoreMessage(ctx, engine.NewMessage{Channel: "project:p:decisions", Sender: "a", Content: text, Confidence: ptrFloat(0.5 + float64(i)/10)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	colls, err := vecstore.Open(ctx, filepath.Join(dir, sqlite.VectorsDir), vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := colls.CreateCollection(ctx, chroma.CreateCollectionRequest{Tenant: chroma.DefaultTenant, Database: chroma.DefaultDatabase, Name: "docs"})
	if err != nil {
		t.Fatal(err)
	}
	if err := colls.Add(ctx, c.ID, chroma.AddRequest{IDs: []string{"d1"}, Embeddings: [][]float32{{1, 2, 3}}}); err != nil {
		t.Fatal(err)
	}
	colls.Close()

	archive := filepath.Join(t.TempDir(), "b.cairn.zst")
	m, err := ops.Backup(ctx, e, archive, engine.BackupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path)
	}
	if !slicesContains(paths, "vectors/vectors.db") || slicesContains(paths, "vectors/vectors.seq") || slicesContains(paths, "vectors/vectors.lock") {
		t.Errorf("archived files %v: want vectors/vectors.db and none of the per-process files", paths)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	if _, err := sqlite.Restore(ctx, archive, restored, sqlite.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	before := emb.Texts()
	r, err := enginetest.OpenEngine(ctx, restored, engine.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := ops.SyncVectors(ctx, r, nil); err != nil {
		t.Fatal(err)
	}
	res, err := r.SearchDetailed(ctx, engine.SearchRequest{Query: "pin bindings version", Mode: engine.ModeSemantic, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 1 || res.Results[0].Message.Content != "pin the bindings version" {
		t.Errorf("semantic search after restore = %+v", res)
	}
	if emb.Texts() != before+1 { // the query only: no message was re-embedded
		t.Errorf("restore re-embedded %d texts", emb.Texts()-before-1)
	}
	colls, err = vecstore.Open(ctx, filepath.Join(restored, sqlite.VectorsDir), vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer colls.Close()
	c, err = colls.GetCollection(ctx, chroma.DefaultTenant, chroma.DefaultDatabase, "docs")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := colls.Count(ctx, c.ID); err != nil || n != 1 {
		t.Errorf("collection after restore: %d records, %v", n, err)
	}
}

func ptrFloat(f float64) *float64 { return &f }

func slicesContains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// TestFaultBackupNoOverwrite: a backup never replaces an existing file
// unless asked.
func TestFaultBackupNoOverwrite(t *testing.T) {
	ctx := context.Background()
	e := enginetest.OpenIn(t, "", engine.Options{})
	enginetest.AgedNote(t, e, "a", "a note to keep", time.Hour, 0.7, "", "")
	archive := filepath.Join(t.TempDir(), "precious.txt")
	if err := os.WriteFile(archive, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Backup(ctx, e, archive, engine.BackupOptions{}); !errors.Is(err, engine.ErrExists) {
		t.Fatalf("backup over an existing file: %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(archive); string(b) != "precious" {
		t.Fatalf("the existing file was changed to %d bytes", len(b))
	}
	if _, err := ops.Backup(ctx, e, archive, engine.BackupOptions{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.VerifyBackup(ctx, archive); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(archive)); len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}
