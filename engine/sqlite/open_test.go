package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/enginetest"
	_ "modernc.org/sqlite"
)

func TestOpenCreatesAndReopens(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a", "b")
	e, err := enginetest.OpenEngine(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := enginetest.MustNote(t, e, engine.NewNote{Agent: "alice", Content: "persist me"})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := e.GetMessage(ctx, id); !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("GetMessage after Close: got %v, want ErrClosed", err)
	}
	if _, err := e.WriteNote(ctx, engine.NewNote{Agent: "alice", Content: "x"}); !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("WriteNote after Close: got %v, want ErrClosed", err)
	}
	// The use cases over the engine's store close with it.
	if _, err := ingest.ListSessions(ctx, e); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("ingest.ListSessions after Close: got %v, want ErrClosed", err)
	}
	if _, err := ops.GC(ctx, e, ops.GCOptions{}); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("ops.GC after Close: got %v, want ErrClosed", err)
	}
	if _, err := ops.Backup(ctx, e, filepath.Join(t.TempDir(), "b.tar.zst"), engine.BackupOptions{}); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("ops.Backup after Close: got %v, want ErrClosed", err)
	}
	e2, err := enginetest.OpenEngine(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	m, err := e2.GetMessage(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Content, "persist me"; got != want {
		t.Fatalf("content: got %q, want %q", got, want)
	}
	if err := ops.Check(ctx, e2); err != nil {
		t.Fatal(err)
	}
}

func TestOpenSetsPragmasOnEveryConnection(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := enginetest.OpenEngine(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// Many concurrent reads force several pooled connections; each must
	// see foreign keys on (a pragma per connection, not per pool).
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.Search(ctx, engine.SearchRequest{Query: "x"}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, sqlite.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	var version, appID int
	if err := db.QueryRow("SELECT (SELECT journal_mode FROM pragma_journal_mode), (SELECT user_version FROM pragma_user_version), (SELECT application_id FROM pragma_application_id)").Scan(&mode, &version, &appID); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" || version != sqlite.FormatVersion() || appID != sqlite.ApplicationID {
		t.Fatalf("journal_mode %q user_version %d application_id %#x; want wal, %d, %#x", mode, version, appID, sqlite.FormatVersion(), sqlite.ApplicationID)
	}
}

func TestOpenRefusesNewerFormat(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := enginetest.OpenEngine(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	db, err := sql.Open("sqlite", filepath.Join(dir, sqlite.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 999"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = enginetest.OpenEngine(ctx, dir, engine.Options{})
	if !errors.Is(err, engine.ErrIncompatibleFormat) {
		t.Fatalf("got %v, want ErrIncompatibleFormat", err)
	}
	if !strings.Contains(err.Error(), "version 999") {
		t.Fatalf("error %q does not name the version", err)
	}
}

func TestOpenRefusesForeignDatabase(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, sqlite.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE other (x)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := enginetest.OpenEngine(context.Background(), dir, engine.Options{}); !errors.Is(err, engine.ErrIncompatibleFormat) {
		t.Fatalf("got %v, want ErrIncompatibleFormat", err)
	}
}

func TestOpenCorruptFile(t *testing.T) {
	for name, content := range map[string][]byte{
		"text":      []byte("this is not a database, just some text that is long enough to look like a header........................................"),
		"bad pages": append([]byte("SQLite format 3\x00"), make([]byte, 5000)...),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, sqlite.DBFile), content, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := enginetest.OpenEngine(context.Background(), dir, engine.Options{})
			if err == nil {
				t.Fatal("Open succeeded on a corrupt file")
			}
			if !errors.Is(err, engine.ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestOpenDataDirProblems(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{
		"dir is a file":    file,
		"parent is a file": filepath.Join(file, "sub"),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := enginetest.OpenEngine(context.Background(), dir, engine.Options{})
			if err == nil || !strings.Contains(err.Error(), "data dir") {
				t.Fatalf("got %v, want an error about the data dir", err)
			}
		})
	}
	t.Run("empty", func(t *testing.T) {
		var inv *engine.InvalidError
		if _, err := enginetest.OpenEngine(context.Background(), "", engine.Options{}); !errors.As(err, &inv) {
			t.Fatalf("got %v, want InvalidError", err)
		}
	})
	t.Run("read-only dir", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root ignores directory permissions")
		}
		dir := filepath.Join(base, "ro")
		if err := os.Mkdir(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		_, err := enginetest.OpenEngine(context.Background(), dir, engine.Options{})
		if err == nil || !strings.Contains(err.Error(), "not writable") {
			t.Fatalf("got %v, want 'not writable'", err)
		}
	})
}

func TestOpenBadOptions(t *testing.T) {
	for _, o := range []struct {
		engine engine.Options
		store  sqlite.Options
	}{{engine: engine.Options{MaxContentBytes: -1}}, {store: sqlite.Options{BusyTimeout: -1}}, {store: sqlite.Options{ReadConns: -1}}} {
		var inv *engine.InvalidError
		if _, err := enginetest.OpenEngineWith(context.Background(), t.TempDir(), o.engine, o.store); !errors.As(err, &inv) {
			t.Errorf("Open(%+v): got %v, want InvalidError", o, err)
		}
	}
}

func TestConcurrentOpenMigratesOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	engines := openConcurrently(t, dir, 4, func() engine.Options { return engine.Options{} })
	var wg sync.WaitGroup
	// All of them write concurrently through their own connections.
	for i, e := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				if _, err := e.WriteNote(ctx, engine.NewNote{Agent: "a", Content: strings.Repeat("x", i+1) + " " + strings.Repeat("y", j+1)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if got := enginetest.CountMessages(t, engines[0]); got != 40 {
		t.Fatalf("got %d messages, want 40", got)
	}
	if err := ops.Check(ctx, engines[0]); err != nil {
		t.Fatal(err)
	}
	for _, e := range engines {
		e.Close()
	}
}

// Many openers creating one new store at the same moment all open it:
// switching a new database to WAL can answer SQLITE_BUSY without waiting,
// which Open must outlast. One round rarely shows it, so there are many.
func TestConcurrentOpensOfANewStoreAllSucceed(t *testing.T) {
	for range 60 {
		for _, e := range openConcurrently(t, t.TempDir(), 8, func() engine.Options { return engine.Options{} }) {
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Processes that open a new store at the same moment with the same model
// share one vector set: the set is looked for again under the write lock,
// so none of them creates a second one whose collection the others lack.
func TestConcurrentOpenWithModelMakesOneSet(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	engines := openConcurrently(t, dir, 4, func() engine.Options {
		return engine.Options{Embedder: enginetest.NewHashEmbedder("m", 16)}
	})
	defer func() {
		for _, e := range engines {
			e.Close()
		}
	}()
	for i, e := range engines {
		if _, err := e.WriteNote(ctx, engine.NewNote{Agent: "a", Content: fmt.Sprintf("note %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	sets, err := ops.VectorSets(ctx, engines[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 1 || sets[0].State != engine.SetActive {
		t.Fatalf("vector sets after 4 concurrent opens: %+v, want one active set", sets)
	}
}

// openConcurrently opens n engines on dir at the same moment, as n
// processes starting together would.
func openConcurrently(t *testing.T, dir string, n int, opts func() engine.Options) []*engine.Engine {
	t.Helper()
	var wg sync.WaitGroup
	engines := make([]*engine.Engine, n)
	errs := make([]error, n)
	for i := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			engines[i], errs[i] = enginetest.OpenEngine(context.Background(), dir, opts())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
	}
	return engines
}
