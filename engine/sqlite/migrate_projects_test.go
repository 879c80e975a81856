package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestSessionProjectsMigrationRefreshesVectors: a format-9 store whose
// session chunks were embedded without a project (their vectors' metadata
// say project ”) migrates to format 10: semantic search scoped to the
// project then finds them through the vectors, which got the project in
// their metadata without being embedded again, and the store checks
// clean.
func TestSessionProjectsMigrationRefreshesVectors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	transcripts := t.TempDir()
	enginetest.WriteTranscript(t, transcripts, "/nowhere/billing-service", "why are invoice totals off by a cent", "round once after summing the invoice lines")
	e := enginetest.OpenDir(t, dir, engine.Options{NoVectorWorker: true})
	if rep, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: transcripts}); err != nil || rep.Chunks != 2 {
		t.Fatalf("import: %+v %v", rep, err)
	}
	e.Close()
	raw := func(q string) {
		t.Helper()
		db, err := sql.Open("sqlite", filepath.Join(dir, sqlite.DBFile))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	// As an import before projects were recorded left it.
	raw("UPDATE messages SET sender_project_id = ''; DELETE FROM agents WHERE project_id <> ''; UPDATE agents SET message_count = 1")
	emb := enginetest.NewHashEmbedder("hash-p", 32)
	e = enginetest.OpenDir(t, dir, engine.Options{Embedder: emb})
	enginetest.MustSync(t, e)
	scoped := engine.SearchRequest{Query: "invoice totals", Mode: engine.ModeSemantic, Filter: engine.Filter{Project: "billing-service"}}
	if rs, err := e.Search(ctx, scoped); err != nil || len(rs) != 0 {
		t.Fatalf("before the migration: %d results (%v)", len(rs), err)
	}
	e.Close()

	raw("PRAGMA user_version = 9")
	e = enginetest.OpenDir(t, dir, engine.Options{Embedder: emb})
	enginetest.MustSync(t, e)
	rs, err := e.Search(ctx, scoped)
	if err != nil {
		t.Fatal(err)
	}
	got := enginetest.ResultIDs(rs)
	slices.Sort(got)
	if !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("semantic search in the project after the migration: %v", got)
	}
	for _, text := range []string{"why are invoice totals off by a cent", "round once after summing the invoice lines"} {
		if n := emb.Embedded(text); n != 1 {
			t.Errorf("%q embedded %d times", text, n)
		}
	}
	enginetest.MustConsistent(t, e)
}
