package vecstore_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// TestSmallCollectionsAreExact: an unfiltered query on a collection of at
// most Options.ExactMax records is an exact scan, so it returns the true
// nearest neighbours (as Chroma's brute-force answers do on small
// collections), whatever order the graph was built in.
func TestSmallCollectionsAreExact(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 6))
	vecs := clusteredVecs(r, 1500, 32)
	queries := clusteredVecs(r, 60, 32)
	s, err := vecstore.Open(ctx, t.TempDir(), vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := mustCreate(t, s, chroma.CreateCollectionRequest{Name: "small", Metadata: chroma.Metadata{"hnsw:space": where.String("cosine")}})
	addVecs(t, s, c.ID, vecs)
	for i, q := range queries {
		got := queryIDs(t, s, c.ID, q, 10, nil)
		if rec := recallOf(got, exactTop(vecs, q, 10, true)); rec != 1 {
			t.Fatalf("query %d: recall %.2f, want the exact answer", i, rec)
		}
	}
}
