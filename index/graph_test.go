package index_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/index"
)

// TestMarshalGraph round-trips the graph without its vectors: given the
// vectors back, the decoded index searches exactly like the original and
// marshals to the same bytes. (Tombstones' vectors cannot be handed back,
// so the original has none; TestFixtureV3 covers a graph with them.)
func TestMarshalGraph(t *testing.T) {
	for _, code := range []index.Code{index.Float32, index.SQ8} {
		for _, space := range []index.Space{index.Cosine, index.L2} {
			r := rand.New(rand.NewPCG(3, 4))
			data := clustered(r, 400, 8, 6, 0.5)
			x := newChecked(t, index.Options{Dim: 8, Space: space, M: 4, EfConstruction: 32, EfSearch: 20, Seed: 5, Workers: 1, Code: code})
			for i, v := range data {
				if err := x.Insert(uint32(i), v); err != nil {
					t.Fatal(err)
				}
			}
			g, err := x.MarshalGraph()
			if err != nil {
				t.Fatal(err)
			}
			full, _ := x.MarshalBinary()
			if len(g) >= len(full) {
				t.Errorf("%v/%v: graph %d bytes, full %d", code, space, len(g), len(full))
			}
			if _, err := index.Unmarshal(g); !errors.Is(err, index.ErrCorrupt) {
				t.Errorf("Unmarshal of a graph without vectors: %v", err)
			}
			// The caller hands back the vectors as it inserted them.
			vector := func(id uint32) ([]float32, error) { return data[id], nil }
			y, err := index.UnmarshalGraph(g, vector)
			if err != nil {
				t.Fatal(err)
			}
			if err := y.Check(); err != nil {
				t.Fatal(err)
			}
			if y.Len() != x.Len() || y.Stats().Tombstones != 0 {
				t.Errorf("%v/%v: Len %d/%d", code, space, y.Len(), x.Len())
			}
			g2, _ := y.MarshalGraph()
			if !bytes.Equal(g, g2) {
				t.Errorf("%v/%v: re-marshalled graph differs", code, space)
			}
			for _, q := range clustered(rand.New(rand.NewPCG(1, 1)), 20, 8, 3, 0.5) {
				a, _ := x.Search(q, 5, index.SearchOptions{})
				b, _ := y.Search(q, 5, index.SearchOptions{})
				if !sameIDs(a, b) {
					t.Errorf("%v/%v: search differs: %v vs %v", code, space, a, b)
				}
			}
			// Vectors missing on load (records deleted since) become
			// tombstones; the index stays consistent and usable.
			z, err := index.UnmarshalGraph(g, func(id uint32) ([]float32, error) {
				if id%2 == 0 {
					return nil, nil
				}
				return vector(id)
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := z.Check(); err != nil {
				t.Fatal(err)
			}
			if z.Contains(2) || !z.Contains(1) {
				t.Errorf("%v/%v: missing vectors not turned into tombstones", code, space)
			}
			res, _ := z.Search(data[1], 3, index.SearchOptions{})
			if len(res) == 0 || res[0].ID != 1 {
				t.Errorf("%v/%v: search after missing vectors: %v", code, space, res)
			}
			z.Repair()
			if err := z.Insert(2, data[2]); err != nil {
				t.Fatal(err)
			}
			if err := z.Check(); err != nil {
				t.Fatal(err)
			}
			// The caller's read error comes back unwrapped from corruption.
			boom := errors.New("boom")
			if _, err := index.UnmarshalGraph(g, func(uint32) ([]float32, error) { return nil, boom }); !errors.Is(err, boom) || errors.Is(err, index.ErrCorrupt) {
				t.Errorf("vector error: %v", err)
			}
		}
	}
}

func sameIDs(a, b []index.Result) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			return false
		}
	}
	return true
}

// TestSQ8Codec checks AppendSQ8/DecodeSQ8 against the index: an L2 SQ8
// index given the decoded vector holds exactly that vector, so a caller
// storing AppendSQ8's form and inserting its decoding loses nothing more.
func TestSQ8Codec(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	x := newChecked(t, index.Options{Dim: 16, Space: index.L2, Code: index.SQ8})
	for i := range 50 {
		v := make([]float32, 16)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		b := index.AppendSQ8(nil, v)
		if len(b) != index.SQ8Len(16) {
			t.Fatalf("len %d", len(b))
		}
		d, err := index.DecodeSQ8(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Insert(uint32(i), d); err != nil {
			t.Fatal(err)
		}
		got, _ := x.Vector(uint32(i))
		for j := range d {
			if diff := got[j] - d[j]; diff > 1e-6 || diff < -1e-6 {
				t.Fatalf("vector %d component %d: index holds %v, decoded %v", i, j, got[j], d[j])
			}
		}
	}
	for _, bad := range [][]byte{nil, {1, 2, 3}, {0, 0, 0xc0, 0x7f, 0, 0, 0, 0, 1}} {
		if _, err := index.DecodeSQ8(bad); !errors.Is(err, index.ErrCorrupt) {
			t.Errorf("DecodeSQ8(%v): %v", bad, err)
		}
	}
}

// TestFixtureV3 opens the frozen version-3 files (a full float32 index and
// an SQ8 graph without vectors) forever. Run with -run TestFixtureV3
// -rewrite only when deliberately freezing them.
func TestFixtureV3(t *testing.T) {
	x := smallIndex(t, index.Cosine)
	vector := func(id uint32) ([]float32, error) {
		v, _ := x.Vector(id)
		return v, nil
	}
	for _, name := range []string{"v3-float32.bin", "v3-sq8-graph.bin"} {
		path := filepath.Join("testdata", name)
		b := frozenFixture(t, path, func() ([]byte, error) {
			if name == "v3-float32.bin" {
				return x.MarshalBinary()
			}
			y := smallIndex(t, index.Cosine)
			if err := y.Recode(index.SQ8); err != nil {
				return nil, err
			}
			return y.MarshalGraph()
		})
		y, err := index.UnmarshalGraph(b, vector)
		if err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
		if err := y.Check(); err != nil {
			t.Fatal(err)
		}
		o := y.Options()
		if y.Len() != 300-43 || o.Space != index.Cosine || o.Dim != 8 || o.M != 4 || o.Seed != 5 || y.Contains(7) {
			t.Errorf("%s: Len %d, options %+v", path, y.Len(), o)
		}
		q, _ := x.Vector(1)
		res, err := y.Search(q, 3, index.SearchOptions{})
		if err != nil || len(res) != 3 || res[0].ID != 1 || res[0].Distance > 1e-3 {
			t.Errorf("%s: search = %v, %v", path, res, err)
		}
		exact, _ := y.Exact(q, 3, nil)
		if !sameIDs(res, exact) {
			t.Errorf("%s: search %v, exact %v", path, res, exact)
		}
	}
}
