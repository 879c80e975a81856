package index_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/index"
)

func TestParseCode(t *testing.T) {
	for _, c := range []index.Code{index.Float32, index.SQ8} {
		got, err := index.ParseCode(c.String())
		if err != nil || got != c {
			t.Errorf("ParseCode(%q) = %v, %v", c.String(), got, err)
		}
	}
	if _, err := index.ParseCode("pq"); !errors.Is(err, index.ErrInvalidOptions) {
		t.Errorf("ParseCode(pq): %v", err)
	}
	if _, err := index.New(index.Options{Dim: 4, Code: 7}); !errors.Is(err, index.ErrInvalidOptions) {
		t.Errorf("New with Code 7: %v", err)
	}
}

// recallVs is the recall@k of x's searches against the exact top-k of
// the float32 index ref (the same vectors, exact distances).
func recallVs(t testing.TB, x, ref *index.Index, queries [][]float32, k int, so index.SearchOptions) float64 {
	t.Helper()
	hit, total := 0, 0
	for _, q := range queries {
		want, err := ref.Exact(q, k, so.Allow)
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.Search(q, k, so)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range got {
			if slices.ContainsFunc(want, func(w index.Result) bool { return w.ID == g.ID }) {
				hit++
			}
		}
		total += len(want)
	}
	return float64(hit) / float64(total)
}

// TestSQ8Recall builds the same data as Float32 and as SQ8 and holds the
// SQ8 index's recall, against the float32 oracle, to within 0.02 of the
// float32 index's, unfiltered and filtered, with SQ8 searched at 1.5 times
// the beam as vecstore searches it. The builds run on one worker, so the
// graphs (and the figures) are the same on every run.
func TestSQ8Recall(t *testing.T) {
	r := testRand(t)
	n, dim := 4000, 64
	if testing.Short() || index.RaceEnabled {
		n = 1500
	}
	data := clustered(r, n+100, dim, 20, 0.6)
	base, queries := data[:n], data[n:]
	allow := newBitset(n)
	for id := range n {
		if r.IntN(3) == 0 {
			allow.Add(uint32(id))
		}
	}
	for _, space := range raceSpaces(index.Cosine, index.L2, index.IP) {
		idx := map[index.Code]*index.Index{}
		for _, code := range []index.Code{index.Float32, index.SQ8} {
			x := newChecked(t, index.Options{Dim: dim, Space: space, Code: code, EfSearch: 40, Seed: 3, Workers: 1})
			if err := x.InsertBatch(context.Background(), seqIDs(0, n), base); err != nil {
				t.Fatal(err)
			}
			idx[code] = x
		}
		ref := idx[index.Float32]
		for _, so := range []index.SearchOptions{{}, {Allow: allow}, {Ef: 10}} {
			f := recallVs(t, ref, ref, queries, 10, so)
			wide := so
			wide.Ef = int(1.5 * float64(cmp.Or(so.Ef, 40)))
			q := recallVs(t, idx[index.SQ8], ref, queries, 10, wide)
			t.Logf("%v ef %d filtered %v: recall float32 %.4f, sq8 %.4f", space, so.Ef, so.Allow != nil, f, q)
			if q < f-0.02 {
				t.Errorf("%v ef %d filtered %v: sq8 recall %.4f, float32 %.4f", space, so.Ef, so.Allow != nil, q, f)
			}
		}
	}
}

// TestSQ8Mutations deletes, replaces and repairs in an SQ8 index and
// checks it against the exact oracle.
func TestSQ8Mutations(t *testing.T) {
	r := testRand(t)
	n, dim := 1200, 32
	data := clustered(r, 2*n, dim, 10, 0.5)
	x := newChecked(t, index.Options{Dim: dim, Code: index.SQ8, M: 8, Seed: 1, Workers: 2})
	if err := x.InsertBatch(context.Background(), seqIDs(0, n), data[:n]); err != nil {
		t.Fatal(err)
	}
	for id := 0; id < n; id += 3 {
		if err := x.Delete(uint32(id)); err != nil {
			t.Fatal(err)
		}
	}
	// Replace a third of the ids, reusing deleted slots.
	ids := seqIDs(0, n/3)
	for i := range ids {
		ids[i] *= 3
	}
	if err := x.InsertBatch(context.Background(), ids, data[n:n+len(ids)]); err != nil {
		t.Fatal(err)
	}
	x.Repair()
	if got := x.Len(); got != n {
		t.Fatalf("Len = %d, want %d", got, n)
	}
	if rec := recallAt(t, x, data[n+len(ids):n+len(ids)+50], 10, index.SearchOptions{}); rec < 0.95 {
		t.Errorf("recall after mutations %.3f", rec)
	}
	v, ok := x.Vector(3)
	if !ok {
		t.Fatal("Vector(3) missing")
	}
	if d := index.Distance(index.L2, v, data[n+1]); d > 1e-4 {
		t.Errorf("decoded vector 3 is %g from what was inserted", d)
	}
}

// TestRecode turns a float32 index into SQ8 and back, keeping the graph.
func TestRecode(t *testing.T) {
	x := smallIndex(t, index.L2)
	ref := smallIndex(t, index.L2)
	if err := x.Recode(index.SQ8); err != nil {
		t.Fatal(err)
	}
	if err := x.Check(); err != nil {
		t.Fatal(err)
	}
	if got := x.Options().Code; got != index.SQ8 {
		t.Fatalf("Options().Code = %v", got)
	}
	if s, f := x.Stats().Bytes, ref.Stats().Bytes; s >= f {
		t.Errorf("sq8 Stats.Bytes %d, float32 %d", s, f)
	}
	r := rand.New(rand.NewPCG(2, 2))
	qs := clustered(r, 50, 8, 3, 0.5)
	if rec := recallVs(t, x, ref, qs, 5, index.SearchOptions{}); rec < 0.97 {
		t.Errorf("recall after Recode %.3f", rec)
	}
	if err := x.Recode(index.Float32); err != nil {
		t.Fatal(err)
	}
	if err := x.Check(); err != nil {
		t.Fatal(err)
	}
	if err := x.Recode(index.Code(5)); !errors.Is(err, index.ErrInvalidOptions) {
		t.Errorf("Recode(5): %v", err)
	}
}

func TestMarshalSQ8RoundTrip(t *testing.T) {
	for _, space := range []index.Space{index.Cosine, index.L2, index.IP} {
		x := smallIndex(t, space)
		if err := x.Recode(index.SQ8); err != nil {
			t.Fatal(err)
		}
		b, err := x.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		y, err := index.Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if y.Options().Code != index.SQ8 || y.Len() != x.Len() {
			t.Fatalf("decoded options %+v, Len %d", y.Options(), y.Len())
		}
		b2, _ := y.MarshalBinary()
		if !bytes.Equal(b, b2) {
			t.Errorf("%v: re-marshalled bytes differ", space)
		}
		r := rand.New(rand.NewPCG(1, 1))
		for _, q := range clustered(r, 20, 8, 3, 0.5) {
			a, _ := x.Search(q, 5, index.SearchOptions{})
			c, _ := y.Search(q, 5, index.SearchOptions{})
			if !slices.Equal(a, c) {
				t.Errorf("%v: search differs after round trip: %v vs %v", space, a, c)
			}
		}
	}
}

// TestFixtureV2 opens the frozen version-2 files (a float32 and an SQ8
// index) forever. Run with -rewrite only when deliberately freezing them.
func TestFixtureV2(t *testing.T) {
	for _, code := range []index.Code{index.Float32, index.SQ8} {
		path := filepath.Join("testdata", "v2-"+code.String()+".bin")
		b := frozenFixture(t, path, func() ([]byte, error) {
			x := smallIndex(t, index.Cosine)
			if err := x.Recode(code); err != nil {
				return nil, err
			}
			return x.MarshalBinary()
		})
		x, err := index.Unmarshal(b)
		if err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
		if err := x.Check(); err != nil {
			t.Fatal(err)
		}
		o := x.Options()
		if x.Len() != 300-43 || o.Code != code || o.Space != index.Cosine || o.Dim != 8 || o.M != 4 || o.Seed != 5 {
			t.Errorf("%s: Len %d, options %+v", path, x.Len(), o)
		}
		q, _ := x.Vector(1)
		res, err := x.Search(q, 3, index.SearchOptions{})
		if err != nil || len(res) != 3 || res[0].ID != 1 || res[0].Distance > 1e-3 {
			t.Errorf("%s: search = %v, %v", path, res, err)
		}
	}
}
