package engine_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
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
