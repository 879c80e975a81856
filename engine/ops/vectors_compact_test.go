package ops_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/enginetest"
	"github.com/cairn-dev/cairn/vecstore"
)

// TestBulkImportLeavesVectorFileCompact: after a bulk import of 2,000
// messages and the drain of their vectors, the vector file is no larger
// than a freshly compacted copy of it (the drain's many transactions and
// snapshot rewrites leave no free pages, and the file ends at its last page
// in use), and stays so through a later open that only reads.
func TestBulkImportLeavesVectorFileCompact(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := enginetest.OpenDir(t, dir, engine.Options{Embedder: enginetest.NewHashEmbedder("hash-a", 384), NoVectorWorker: true})
	var lines strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&lines, `{"channel_id":"talk-%d","sender_id":"speaker-%d","content":"turn %d of the conversation about topic %d and item %d"}`+"\n", i%4, i%7, i, i%37, i*7919%1009)
	}
	if _, err := ingest.ImportMessages(ctx, e, strings.NewReader(lines.String()), ingest.ImportMessagesOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, sqlite.VectorsDir, "vectors.db")
	got := fileSize(t, file)

	// The reference: a copy of the file, compacted unconditionally.
	ref := t.TempDir()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ref, "vectors.db"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := vecstore.Open(ctx, ref, vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Compact(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	want := fileSize(t, filepath.Join(ref, "vectors.db"))
	// Bound: the compacted copy plus two 16 KiB pages (bbolt's page
	// allocation may differ by a page between two equal copies).
	if got > want+2*16<<10 {
		t.Errorf("vector file after a bulk import: %d bytes, a compacted copy %d (%.2fx)", got, want, float64(got)/float64(want))
	}

	e2 := enginetest.OpenDir(t, dir, engine.Options{Embedder: enginetest.NewHashEmbedder("hash-a", 384), NoVectorWorker: true})
	if _, err := e2.Search(ctx, engine.SearchRequest{Query: "conversation about topic 3"}); err != nil {
		t.Fatal(err)
	}
	if err := e2.Close(); err != nil {
		t.Fatal(err)
	}
	if after := fileSize(t, file); after > got {
		t.Errorf("a search grew the vector file: %d -> %d bytes", got, after)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
