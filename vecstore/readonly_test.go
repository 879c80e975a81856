package vecstore_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// TestReadsWriteNothing: opening an existing store, querying and getting
// records, and closing leave its files byte for byte as they were.
func TestReadsWriteNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := vecstore.Open(ctx, dir, vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := mustCreate(t, w, chroma.CreateCollectionRequest{Name: "notes"})
	r := rand.New(rand.NewPCG(7, 7))
	addRandom(t, w, c.ID, r, 0, 200, 8)
	queryIDs(t, w, c.ID, randVec(r, 8), 5, nil) // builds the graph, which Close snapshots
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := func() map[string][]byte {
		out := map[string][]byte{}
		for _, name := range vecstore.SnapshotFiles() {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err == nil {
				out[name] = b
			}
		}
		return out
	}
	before := files()

	s, err := vecstore.Open(ctx, dir, vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	queryIDs(t, s, c.ID, randVec(r, 8), 5, nil)
	if _, err := s.Get(ctx, c.ID, chroma.GetRequest{IDs: []string{"id1", "id2"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	after := files()
	for name, b := range before {
		if !bytes.Equal(b, after[name]) {
			t.Errorf("%s changed by reads (%d -> %d bytes)", name, len(b), len(after[name]))
		}
	}
}
