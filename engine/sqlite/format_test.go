package sqlite_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestFrozenFormat1 opens the frozen format-1 database in
// testdata/format1 (written once by format 1's schema, never regenerated):
// every later cairn must migrate it and read it. Keep this test forever.
func TestFrozenFormat1(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src, err := os.Open(filepath.Join("testdata", "format1", sqlite.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(filepath.Join(dir, sqlite.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()

	e, err := enginetest.OpenEngine(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatalf("open format 1: %v", err)
	}
	defer e.Close()
	if err := ops.Check(ctx, e); err != nil {
		t.Fatalf("check after migration: %v", err)
	}
	m, err := e.GetMessage(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.Content != "SQLite WAL mode lets readers run while a writer commits; ping @bob" || m.Confidence != 0.9 ||
		m.MessageType != "decision" || !reflect.DeepEqual(m.Mentions, []string{"bob"}) || !m.HasBreadcrumbs ||
		m.CreatedAt.UnixMilli() != 1767323045000 || m.Breadcrumbs().Files[0] != "engine/store.go" {
		t.Fatalf("message 1: %+v", m)
	}
	rs, err := e.Search(ctx, engine.SearchRequest{Query: "deployed"})
	if err != nil || len(rs) != 1 || rs[0].Message.ID != 2 {
		t.Fatalf("keyword search in format 1 data: %+v %v", rs, err)
	}
	// Writing the same note again is recognized as a duplicate of the old row.
	res, err := e.WriteNote(ctx, engine.NewNote{Agent: "alice", Project: "cairn", Content: m.Content})
	if err != nil || res.Created || res.ID != 1 {
		t.Fatalf("idempotent write over format 1 data: %+v %v", res, err)
	}
	chs, err := e.ListChannels(ctx, engine.Scope{})
	if err != nil || len(chs) != 5 {
		t.Fatalf("channels: %d %v", len(chs), err)
	}
}

// TestFrozenFormat7 opens the frozen format-7 database in
// testdata/format7 (two notes with file breadcrumbs and their marks cached
// against whichever repository the checking process ran in, written once
// by format 7's schema, never regenerated). The migration drops those
// marks (derived data, refilled per repository); the notes recorded no
// repository, so they are offered to the next check anywhere for
// adoption. Keep this test forever.
func TestFrozenFormat7(t *testing.T) {
	ctx := context.Background()
	e := openFrozen(t, "format7")
	if n, err := enginetest.CountMarks(ctx, e); err != nil || n != 0 {
		t.Fatalf("marks of format 7 kept: %d %v", n, err)
	}
	m, err := e.GetMessage(ctx, 1)
	if err != nil || m.Content != "package a declares A" || m.Breadcrumbs().Files[0] != "a.go:1-3" || m.BreadcrumbRepo() != "" || m.BreadcrumbCheck != nil {
		t.Fatalf("message 1: %+v %v", m, err)
	}
	head := strings.Repeat("d", 40)
	todo, err := ops.MessagesToMark(ctx, e, "/src/a", head, 0, 0)
	if err != nil || len(todo) != 2 || todo[0].ID != 1 || todo[1].ID != 2 {
		t.Fatalf("offered for adoption: %v %v", todo, err)
	}
}

// TestFrozenFormat9 opens the frozen format-9 database in
// testdata/format9: two Claude Code sessions imported by a cairn that did
// not record their project (all their chunks have project ”; one
// session's summary record and one assistant record name no working
// directory, and the directories are on no machine), then migrated to
// format 9; and one note of project cairn. Written once, never
// regenerated. The migration gives each chunk the project of its record's
// working directory, else its session's (here the directory's own name,
// the directories being gone), so project-scoped searches find them, and
// moves the agents' counts to those projects. Keep this test forever.
func TestFrozenFormat9(t *testing.T) {
	ctx := context.Background()
	e := openFrozen(t, "format9")
	for project, want := range map[string][]int64{"billing-service": {1, 2, 3}, "shop": {4, 5}, "cairn": {6}} {
		rs, err := e.Search(ctx, engine.SearchRequest{Filter: engine.Filter{Project: project}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		got := enginetest.ResultIDs(rs)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("project %s lists %v, want %v", project, got, want)
		}
	}
	rs, err := e.Search(ctx, engine.SearchRequest{Query: "invoice totals", Mode: engine.ModeKeyword, Filter: engine.Filter{Project: "billing-service"}})
	if err != nil || len(rs) == 0 || rs[0].Message.SenderProjectID != "billing-service" {
		t.Fatalf("keyword search in project billing-service: %+v %v", rs, err)
	}
	agents, err := e.ListAgents(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int64{}
	for _, a := range agents {
		count[a.Name+"/"+a.ProjectID] = a.MessageCount
	}
	want := map[string]int64{"claude/cairn": 1, "claude-code/": 0, "claude-code/billing-service": 2, "claude-code/shop": 1, "human/": 0, "human/billing-service": 1, "human/shop": 1}
	if !reflect.DeepEqual(count, want) {
		t.Errorf("agents %v, want %v", count, want)
	}
	if _, err := e.GetChannel(ctx, engine.ProjectChannelID("shop", engine.ProjectChannelNames()[0])); err != nil {
		t.Errorf("project shop's channels: %v", err)
	}
}

// openFrozen opens a copy of the frozen database testdata/name, migrated
// to this build's format, and checks it; it is closed when the test ends.
func openFrozen(t *testing.T, name string) *engine.Engine {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", name, sqlite.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, sqlite.DBFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := enginetest.OpenEngine(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	t.Cleanup(func() { e.Close() })
	if err := ops.Check(ctx, e); err != nil {
		t.Fatalf("check after migration: %v", err)
	}
	return e
}
