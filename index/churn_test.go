package index_test

import (
	"context"
	"testing"

	"github.com/cairn-dev/cairn/index"
)

// TestFilteredRecall checks Search with allow sets at 50%, 10%, 1% and
// 0.1% selectivity against the exact filtered scan (recall@10 >= 0.95);
// at 50,000 vectors 50% and 10% take the graph walks, 1% and 0.1% the
// exact scan; with -short (10,000 vectors) only 50% walks the graph, and
// under the race detector (2,000) none does.
func TestFilteredRecall(t *testing.T) {
	r := testRand(t)
	n, dim := 50000, 32
	if testing.Short() {
		n = 10000
	}
	if index.RaceEnabled {
		n = 2000
	}
	data := clustered(r, n+200, dim, 100, 0.6)
	x := newChecked(t, index.Options{Dim: dim, Space: index.Cosine, Seed: 8})
	if err := x.InsertBatch(context.Background(), seqIDs(0, n), data[:n]); err != nil {
		t.Fatal(err)
	}
	for _, sel := range []float64{0.5, 0.1, 0.01, 0.001} {
		allow := newBitset(n)
		for allow.GetCardinality() < uint64(sel*float64(n)) {
			allow.Add(uint32(r.IntN(n)))
		}
		so := index.SearchOptions{Allow: allow}
		if rec := recallAt(t, x, data[n:], 10, so); rec < 0.95 {
			t.Errorf("selectivity %g: recall@10 = %.3f, want >= 0.95", sel, rec)
		}
		for _, q := range data[n : n+20] {
			res, _ := x.Search(q, 10, so)
			if len(res) != min(10, int(allow.GetCardinality())) {
				t.Errorf("selectivity %g: %d results", sel, len(res))
			}
			for _, rr := range res {
				if !allow.Contains(rr.ID) {
					t.Fatalf("selectivity %g: id %d not allowed", sel, rr.ID)
				}
			}
		}
	}
}

// TestChurn inserts n vectors, then three times deletes a random half and
// reinserts new vectors at those ids. Recall must stay within 0.01 of a
// fresh build of the final vectors, and slots must be reused.
func TestChurn(t *testing.T) {
	n, dim := 100000, 32
	if testing.Short() {
		n = 5000
	}
	if index.RaceEnabled {
		n = 1500
	}
	r := testRand(t)
	ctx := context.Background()
	pool := clustered(r, 2*n+500, dim, 200, 0.7)
	current := make([][]float32, n)
	copy(current, pool[:n])
	queries := pool[2*n:]
	next := n
	x := newChecked(t, index.Options{Dim: dim, Space: index.L2, Seed: 12})
	if err := x.InsertBatch(ctx, seqIDs(0, n), current); err != nil {
		t.Fatal(err)
	}
	so := index.SearchOptions{Ef: 16}
	for round := 0; round < 3; round++ {
		perm := r.Perm(n)[:n/2]
		ids := make([]uint32, len(perm))
		vecs := make([][]float32, len(perm))
		for i, p := range perm {
			if err := x.Delete(uint32(p)); err != nil {
				t.Fatal(err)
			}
			ids[i] = uint32(p)
			current[p] = pool[n+(next-n)%n]
			next++
			vecs[i] = current[p]
		}
		if x.Len() != n-n/2 {
			t.Fatalf("round %d: Len %d after deletes", round, x.Len())
		}
		if err := x.InsertBatch(ctx, ids, vecs); err != nil {
			t.Fatal(err)
		}
		if st := x.Stats(); st.Live != n || st.Slots > n+n/4 {
			t.Fatalf("round %d: %+v", round, st)
		}
		if err := x.Check(); err != nil {
			t.Fatal(err)
		}
	}
	churned := recallAt(t, x, queries, 10, so)
	fresh := newChecked(t, index.Options{Dim: dim, Space: index.L2, Seed: 12})
	if err := fresh.InsertBatch(ctx, seqIDs(0, n), current); err != nil {
		t.Fatal(err)
	}
	want := recallAt(t, fresh, queries, 10, so)
	t.Logf("recall@10 at ef 16: churned %.4f, fresh %.4f", churned, want)
	if churned < want-0.01 {
		t.Errorf("recall after churn %.4f, fresh build %.4f: more than 0.01 lower", churned, want)
	}
}
