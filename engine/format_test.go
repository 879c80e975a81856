package engine_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
)

// TestFrozenFormat1 opens the frozen format-1 database in
// testdata/format1 (written once by format 1's schema, never regenerated):
// every later cairn must migrate it and read it. Keep this test forever.
func TestFrozenFormat1(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src, err := os.Open(filepath.Join("testdata", "format1", engine.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(filepath.Join(dir, engine.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()

	e, err := engine.Open(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatalf("open format 1: %v", err)
	}
	defer e.Close()
	if err := e.Check(ctx); err != nil {
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
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "format7", engine.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, engine.DBFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatalf("open format 7: %v", err)
	}
	defer e.Close()
	if err := e.Check(ctx); err != nil {
		t.Fatalf("check after migration: %v", err)
	}
	if n, err := e.CountBreadcrumbMarks(ctx); err != nil || n != 0 {
		t.Fatalf("marks of format 7 kept: %d %v", n, err)
	}
	m, err := e.GetMessage(ctx, 1)
	if err != nil || m.Content != "package a declares A" || m.Breadcrumbs().Files[0] != "a.go:1-3" || m.BreadcrumbRepo() != "" || m.BreadcrumbCheck != nil {
		t.Fatalf("message 1: %+v %v", m, err)
	}
	head := strings.Repeat("d", 40)
	todo, err := e.MessagesToMark(ctx, "/src/a", head, 0, 0)
	if err != nil || len(todo) != 2 || todo[0].ID != 1 || todo[1].ID != 2 {
		t.Fatalf("offered for adoption: %v %v", todo, err)
	}
}
