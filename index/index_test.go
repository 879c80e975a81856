package index_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/index"
)

func TestOptionsValidation(t *testing.T) {
	bad := []index.Options{
		{Dim: 0},
		{Dim: -1},
		{Dim: index.MaxDim + 1},
		{Dim: 8, M: 1},
		{Dim: 8, M: index.MaxM + 1},
		{Dim: 8, Space: 7},
		{Dim: 8, EfSearch: -3},
		{Dim: 8, Workers: -1},
	}
	for _, o := range bad {
		if _, err := index.New(o); !errors.Is(err, index.ErrInvalidOptions) {
			t.Errorf("New(%+v) = %v, want ErrInvalidOptions", o, err)
		}
	}
	x := newChecked(t, index.Options{Dim: 8})
	got := x.Options()
	if got.M != 16 || got.EfConstruction != 200 || got.EfSearch != 100 || got.Workers < 1 {
		t.Errorf("defaults = %+v, want M 16, EfConstruction 200, EfSearch 100", got)
	}
	for _, s := range []index.Space{index.Cosine, index.L2, index.IP} {
		p, err := index.ParseSpace(s.String())
		if err != nil || p != s {
			t.Errorf("ParseSpace(%q) = %v, %v", s.String(), p, err)
		}
	}
	if _, err := index.ParseSpace("hamming"); !errors.Is(err, index.ErrInvalidOptions) {
		t.Errorf("ParseSpace(hamming) = %v", err)
	}
}

func TestDistanceSemantics(t *testing.T) {
	a := []float32{1, 2, 3, 0, 0, 1, 2, 3, 4}
	b := []float32{2, 0, 1, 1, 0, -1, 3, 1, 0}
	var dot, na, nb, l2 float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
		l2 += float64(a[i]-b[i]) * float64(a[i]-b[i])
	}
	cases := []struct {
		space index.Space
		want  float64
	}{
		{index.Cosine, 1 - dot/math.Sqrt(na*nb)},
		{index.L2, l2},
		{index.IP, 1 - dot},
	}
	for _, c := range cases {
		if got := index.Distance(c.space, a, b); math.Abs(float64(got)-c.want) > 1e-5*math.Max(1, math.Abs(c.want)) {
			t.Errorf("Distance(%v) = %v, want %v", c.space, got, c.want)
		}
	}
	// The index reports the same distances as Distance.
	for _, c := range cases {
		x := newChecked(t, index.Options{Dim: len(a), Space: c.space})
		if err := x.Insert(3, b); err != nil {
			t.Fatal(err)
		}
		res, err := x.Search(a, 1, index.SearchOptions{})
		if err != nil || len(res) != 1 || res[0].ID != 3 {
			t.Fatalf("Search = %v, %v", res, err)
		}
		if math.Abs(float64(res[0].Distance)-c.want) > 1e-5*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%v: Search distance %v, want %v", c.space, res[0].Distance, c.want)
		}
	}
}

func TestInputErrors(t *testing.T) {
	x := newChecked(t, index.Options{Dim: 4})
	if err := x.Insert(0, []float32{1, 2, 3}); !errors.Is(err, index.ErrDimensionMismatch) {
		t.Errorf("short vector: %v", err)
	}
	if err := x.Insert(0, []float32{1, float32(math.NaN()), 3, 4}); !errors.Is(err, index.ErrInvalidVector) {
		t.Errorf("NaN vector: %v", err)
	}
	if err := x.Insert(0, []float32{1, float32(math.Inf(1)), 3, 4}); !errors.Is(err, index.ErrInvalidVector) {
		t.Errorf("Inf vector: %v", err)
	}
	if err := x.Insert(index.MaxID+1, []float32{1, 2, 3, 4}); !errors.Is(err, index.ErrInvalidID) {
		t.Errorf("huge id: %v", err)
	}
	if err := x.InsertBatch(context.Background(), []uint32{1, 2}, [][]float32{{1, 2, 3, 4}}); !errors.Is(err, index.ErrBatchMismatch) {
		t.Errorf("batch mismatch: %v", err)
	}
	if _, err := x.Search([]float32{1}, 3, index.SearchOptions{}); !errors.Is(err, index.ErrDimensionMismatch) {
		t.Errorf("short query: %v", err)
	}
	if _, err := x.Exact([]float32{1}, 3, nil); !errors.Is(err, index.ErrDimensionMismatch) {
		t.Errorf("short exact query: %v", err)
	}
	if err := x.Delete(9); !errors.Is(err, index.ErrNotFound) {
		t.Errorf("Delete(absent) = %v", err)
	}
	if x.Len() != 0 {
		t.Errorf("Len = %d after failed inserts", x.Len())
	}
	res, err := x.Search([]float32{1, 2, 3, 4}, 5, index.SearchOptions{})
	if err != nil || len(res) != 0 {
		t.Errorf("Search(empty) = %v, %v", res, err)
	}
}

func TestRecall(t *testing.T) {
	r := testRand(t)
	n := 8000
	if testing.Short() {
		n = 3000
	}
	if index.RaceEnabled {
		n = 1000
	}
	data := clustered(r, n+100, 48, 40, 0.5)
	queries := data[n:]
	for _, space := range []index.Space{index.Cosine, index.L2, index.IP} {
		t.Run(space.String(), func(t *testing.T) {
			x := newChecked(t, index.Options{Dim: 48, Space: space, Seed: 7})
			if err := x.InsertBatch(context.Background(), seqIDs(0, n), data[:n]); err != nil {
				t.Fatal(err)
			}
			if x.Len() != n {
				t.Fatalf("Len = %d, want %d", x.Len(), n)
			}
			if rec := recallAt(t, x, queries, 10, index.SearchOptions{}); rec < 0.97 {
				t.Errorf("recall@10 = %.3f, want >= 0.97", rec)
			}
			// Results are sorted and distances agree with Distance.
			res, _ := x.Search(queries[0], 10, index.SearchOptions{Ef: 50})
			if !slices.IsSortedFunc(res, func(a, b index.Result) int {
				return int(math.Copysign(1, float64(a.Distance-b.Distance)))
			}) {
				t.Errorf("results not sorted: %v", res)
			}
			for _, rr := range res {
				v, ok := x.Vector(rr.ID)
				if !ok {
					t.Fatalf("Vector(%d) missing", rr.ID)
				}
				want := index.Distance(space, queries[0], data[rr.ID])
				if space == index.Cosine {
					want = index.Distance(space, queries[0], v)
				}
				if math.Abs(float64(rr.Distance-want)) > 1e-4 {
					t.Errorf("id %d: distance %v, want %v", rr.ID, rr.Distance, want)
				}
			}
		})
	}
}

func TestSequentialInsertDeterministic(t *testing.T) {
	r := testRand(t)
	data := clustered(r, 600, 16, 10, 0.4)
	build := func() []byte {
		x := newChecked(t, index.Options{Dim: 16, Seed: 42, Workers: 1})
		for i, v := range data {
			if err := x.Insert(uint32(i), v); err != nil {
				t.Fatal(err)
			}
		}
		b, err := x.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if a, b := build(), build(); !slices.Equal(a, b) {
		t.Errorf("two sequential builds with one seed differ")
	}
}

func TestReplaceAndDelete(t *testing.T) {
	r := testRand(t)
	data := clustered(r, 2000, 24, 20, 0.5)
	x := newChecked(t, index.Options{Dim: 24, Space: index.L2, Seed: 3})
	if err := x.InsertBatch(context.Background(), seqIDs(0, 1000), data[:1000]); err != nil {
		t.Fatal(err)
	}
	// Replace id 5 with a far-away vector, then find it there.
	if err := x.Insert(5, data[1500]); err != nil {
		t.Fatal(err)
	}
	if x.Len() != 1000 {
		t.Errorf("Len after replace = %d", x.Len())
	}
	res, err := x.Search(data[1500], 1, index.SearchOptions{})
	if err != nil || len(res) != 1 || res[0].ID != 5 || res[0].Distance != 0 {
		t.Errorf("Search(replacement) = %v, %v", res, err)
	}
	v, ok := x.Vector(5)
	if !ok || !slices.Equal(v, data[1500]) {
		t.Errorf("Vector(5) = %v, %v", v, ok)
	}
	// Delete half; deleted ids never come back.
	deleted := map[uint32]bool{}
	for id := uint32(0); id < 1000; id += 2 {
		if err := x.Delete(id); err != nil {
			t.Fatal(err)
		}
		deleted[id] = true
	}
	if err := x.Delete(0); !errors.Is(err, index.ErrNotFound) {
		t.Errorf("second Delete = %v", err)
	}
	if x.Len() != 500 || x.Contains(0) || !x.Contains(1) {
		t.Errorf("Len %d Contains(0) %v Contains(1) %v", x.Len(), x.Contains(0), x.Contains(1))
	}
	if _, ok := x.Vector(0); ok {
		t.Errorf("Vector(deleted) found")
	}
	for _, q := range data[1000:1100] {
		res, err := x.Search(q, 20, index.SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 20 {
			t.Fatalf("got %d results", len(res))
		}
		for _, rr := range res {
			if deleted[rr.ID] {
				t.Fatalf("deleted id %d returned", rr.ID)
			}
		}
	}
	if rec := recallAt(t, x, data[1000:1100], 10, index.SearchOptions{}); rec < 0.95 {
		t.Errorf("recall after deletes = %.3f", rec)
	}
	// Reinsert into deleted slots: the slots are reused, not appended.
	slots := x.Stats().Slots
	ids := make([]uint32, 0, 500)
	vecs := make([][]float32, 0, 500)
	for id := uint32(0); id < 1000; id += 2 {
		ids = append(ids, id)
		vecs = append(vecs, data[1000+id])
	}
	if err := x.InsertBatch(context.Background(), ids, vecs); err != nil {
		t.Fatal(err)
	}
	st := x.Stats()
	if st.Slots != slots || st.Tombstones != 0 || st.Live != 1000 {
		t.Errorf("after reinsert: %+v (slots before %d)", st, slots)
	}
	if rec := recallAt(t, x, data[1100:1200], 10, index.SearchOptions{}); rec < 0.95 {
		t.Errorf("recall after reinsert = %.3f", rec)
	}
	// Delete everything: searches return nothing, Repair frees all.
	for id := uint32(0); id < 1000; id++ {
		if err := x.Delete(id); err != nil {
			t.Fatal(err)
		}
	}
	if res, _ := x.Search(data[0], 5, index.SearchOptions{}); len(res) != 0 {
		t.Errorf("Search on all-deleted = %v", res)
	}
	x.Repair()
	if st := x.Stats(); st.Live != 0 || st.Tombstones != 0 || st.MaxLevel != -1 {
		t.Errorf("after deleting all: %+v", st)
	}
	if err := x.Insert(7, data[7]); err != nil {
		t.Fatal(err)
	}
	if res, _ := x.Search(data[7], 5, index.SearchOptions{}); len(res) != 1 || res[0].ID != 7 {
		t.Errorf("Search after refill = %v", res)
	}
}

func TestBatchDuplicatesLastWins(t *testing.T) {
	x := newChecked(t, index.Options{Dim: 2, Space: index.L2})
	err := x.InsertBatch(context.Background(), []uint32{1, 2, 1}, [][]float32{{1, 1}, {2, 2}, {3, 3}})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := x.Vector(1); !slices.Equal(v, []float32{3, 3}) || x.Len() != 2 {
		t.Errorf("Vector(1) = %v, Len %d", v, x.Len())
	}
}

func TestInsertBatchCancelled(t *testing.T) {
	r := testRand(t)
	data := clustered(r, 500, 8, 5, 0.5)
	x := newChecked(t, index.Options{Dim: 8})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := x.InsertBatch(ctx, seqIDs(0, 500), data); !errors.Is(err, context.Canceled) {
		t.Errorf("InsertBatch(cancelled) = %v", err)
	}
	if x.Len() != 0 {
		t.Errorf("Len = %d after cancelled batch", x.Len())
	}
}

func TestExactLimitsAndFilter(t *testing.T) {
	r := testRand(t)
	data := clustered(r, 300, 8, 5, 0.5)
	x := newChecked(t, index.Options{Dim: 8, Space: index.L2})
	if err := x.InsertBatch(context.Background(), seqIDs(0, 300), data); err != nil {
		t.Fatal(err)
	}
	allow := newBitset(1000)
	for _, id := range []uint32{3, 50, 299, 700} { // 700 is out of range
		allow.Add(id)
	}
	res, err := x.Search(data[0], 10, index.SearchOptions{Allow: allow})
	if err != nil || len(res) != 3 {
		t.Fatalf("filtered = %v, %v", res, err)
	}
	for _, rr := range res {
		if !allow.Contains(rr.ID) {
			t.Errorf("id %d not allowed", rr.ID)
		}
	}
	if res, _ := x.Search(data[0], 10, index.SearchOptions{Allow: newBitset(10)}); len(res) != 0 {
		t.Errorf("empty allow set returned %v", res)
	}
	all, _ := x.Search(data[0], 1000, index.SearchOptions{})
	if len(all) != 300 {
		t.Errorf("k > Len returned %d", len(all))
	}
}

// TestInsertBatchCancelledMidway cancels a batch while it links: the index
// stays consistent (Check runs at cleanup) and every id is either fully
// present or absent.
func TestInsertBatchCancelledMidway(t *testing.T) {
	r := testRand(t)
	data := clustered(r, 4000, 16, 10, 0.5)
	x := newChecked(t, index.Options{Dim: 16, Workers: 2})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- x.InsertBatch(ctx, seqIDs(0, 4000), data) }()
	for x.Len() < 100 {
		runtime.Gosched()
	}
	cancel()
	err := <-done
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	n := 0
	for id := uint32(0); id < 4000; id++ {
		if x.Contains(id) {
			n++
			if res, _ := x.Search(data[id], 1, index.SearchOptions{Ef: 200}); len(res) == 0 {
				t.Fatalf("present id %d not searchable", id)
			}
		}
	}
	if n != x.Len() {
		t.Errorf("Contains counts %d, Len %d", n, x.Len())
	}
}
