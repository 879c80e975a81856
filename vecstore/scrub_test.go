package vecstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cairn-dev/cairn/internal/rawscan"
	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// markerFiles returns the files under dir whose raw bytes contain marker.
func markerFiles(t *testing.T, dir, marker string) []string {
	t.Helper()
	hits, err := rawscan.FilesContaining(dir, marker)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// TestFaultDeletedDocumentLeavesFile: once Delete (or DeleteCollection)
// returns, no byte of the deleted document is in any file of the store's
// directory, while the store stays open (as after a kill -9: no Close, no
// compaction).
func TestFaultDeletedDocumentLeavesFile(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"records", "collection"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			s, err := vecstore.Open(ctx, dir, vecstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c, err := s.CreateCollection(ctx, chroma.CreateCollectionRequest{Name: "docs"})
			if err != nil {
				t.Fatal(err)
			}
			marker := "zqx-deleted-document-7f3a"
			// Several writes, so that bbolt copies the leaf holding the
			// document to new pages a few times before the delete.
			for i := range 20 {
				doc := fmt.Sprintf("kept document %d", i)
				if i == 3 {
					doc = "secret " + marker + " text"
				}
				req := chroma.AddRequest{IDs: []string{fmt.Sprint("id", i)}, Embeddings: [][]float32{{float32(i), 1, 0}}, Documents: []*string{&doc}}
				if err := s.Add(ctx, c.ID, req); err != nil {
					t.Fatal(err)
				}
			}
			if hits := markerFiles(t, dir, marker); len(hits) == 0 {
				t.Fatal("marker not found before the delete: the test proves nothing")
			}
			switch how {
			case "records":
				if err := s.Delete(ctx, c.ID, chroma.DeleteRequest{IDs: []string{"id3"}}); err != nil {
					t.Fatal(err)
				}
			case "collection":
				if err := s.DeleteCollection(ctx, chroma.DefaultTenant, chroma.DefaultDatabase, "docs"); err != nil {
					t.Fatal(err)
				}
			}
			if hits := markerFiles(t, dir, marker); len(hits) != 0 {
				t.Fatalf("deleted document still in %v", hits)
			}
		})
	}
}
