package engine_test

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestSearchStatsPersist: searches of one process are counted in the
// stats another process reads after the first closes, and the average is
// positive.
func TestSearchStatsPersist(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := enginetest.OpenEngine(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.WriteNote(ctx, engine.NewNote{Agent: "a", Content: "count my searches"}); err != nil {
		t.Fatal(err)
	}
	for range 70 { // past one background flush
		if _, err := e.Search(ctx, engine.SearchRequest{Query: "searches"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := enginetest.OpenEngine(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Search(ctx, engine.SearchRequest{Query: "count"}); err != nil {
		t.Fatal(err)
	}
	st, err := ops.StoreStats(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if st.Search.Searches != 71 || st.Search.AvgMs <= 0 {
		t.Errorf("search stats = %+v, want 71 searches and a positive average", st.Search)
	}
}

// TestSearchMakesNoWrite: searches, listings and the stats of a process
// that writes nothing leave the database file and its WAL untouched (same
// bytes, same mtime, empty WAL), and the searches still show in that
// process's stats.
func TestSearchMakesNoWrite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := enginetest.OpenEngine(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"flaky tests in the parser", "the parser is fast", "tests pass again"} {
		if _, err := e.WriteNote(ctx, engine.NewNote{Agent: "a", Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, sqlite.DBFile)
	before := fileState(t, db)

	r, err := enginetest.OpenEngine(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"parser", "flaky tests", ""} {
		if _, err := r.Search(ctx, engine.SearchRequest{Query: q}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.ListChannels(ctx, engine.Scope{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ListAgents(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r.GetAgentNotes(ctx, "a", "", 10); err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.ListSessions(ctx, r); err != nil {
		t.Fatal(err)
	}
	st, err := ops.StoreStats(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if st.Search.Searches != 3 {
		t.Errorf("searches = %d, want the 3 of this process", st.Search.Searches)
	}
	if wal, err := os.Stat(db + "-wal"); err == nil && wal.Size() != 0 {
		t.Errorf("WAL holds %d bytes after searches only, want none", wal.Size())
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if after := fileState(t, db); after != before {
		t.Errorf("database file changed by searches:\n before %+v\n after  %+v", before, after)
	}
	if wal, err := os.Stat(db + "-wal"); err == nil && wal.Size() != 0 {
		t.Errorf("WAL holds %d bytes after close, want none", wal.Size())
	}
}

// state is what a write to a file changes.
type state struct {
	size  int64
	mtime time.Time
	sum   [sha256.Size]byte
}

func fileState(t *testing.T, path string) state {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return state{size: fi.Size(), mtime: fi.ModTime(), sum: sha256.Sum256(b)}
}

// TestSearchStatsRideOnWrites: a process's searches reach the stored totals
// with its next message write, before it closes.
func TestSearchStatsRideOnWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := enginetest.OpenEngine(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for range 3 {
		if _, err := e.Search(ctx, engine.SearchRequest{Query: "anything"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.WriteNote(ctx, engine.NewNote{Agent: "a", Content: "a write carries the counts"}); err != nil {
		t.Fatal(err)
	}
	other, err := enginetest.OpenEngine(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	st, err := ops.StoreStats(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if st.Search.Searches != 3 {
		t.Errorf("another process sees %d searches, want the 3 stored with the write", st.Search.Searches)
	}
}

// TestSearchStatsOfReadOnlyProcesses: every search counts, also those of
// processes that write nothing (one-shot `cairn search`): three processes
// searching once each, then a process that writes, leave 3 + its own
// searches in the stats, with the database untouched by the readers.
func TestSearchStatsOfReadOnlyProcesses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := enginetest.OpenEngine(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteNote(ctx, engine.NewNote{Agent: "a", Content: "count my searches"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, sqlite.DBFile)
	before, _ := os.ReadFile(db)
	for range 3 {
		r, err := enginetest.OpenEngine(ctx, dir, engine.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Search(ctx, engine.SearchRequest{Query: "searches"}); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if after, _ := os.ReadFile(db); sha256.Sum256(before) != sha256.Sum256(after) {
		t.Error("read-only searches changed the database")
	}
	stats := func(e *engine.Engine) int64 {
		st, err := ops.StoreStats(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		return st.Search.Searches
	}
	r, err := enginetest.OpenEngine(ctx, dir, engine.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := stats(r); n != 3 {
		t.Errorf("after 3 one-shot searches: %d searches counted", n)
	}
	r.Close()
	w, err = enginetest.OpenEngine(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Search(ctx, engine.SearchRequest{Query: "count"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteNote(ctx, engine.NewNote{Agent: "a", Content: "another note"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err = enginetest.OpenEngine(ctx, dir, engine.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n := stats(r); n != 4 {
		t.Errorf("after 3 one-shot searches and a writer's one: %d searches counted", n)
	}
}
