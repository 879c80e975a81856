package index_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/index"
)

// viewFixture is an index with tombstones, its vectors as given, and the
// stored form of each (little-endian float32s, or AppendSQ8 of the vector
// the index holds, AppendSQ8Unit in the cosine space).
func viewFixture(t testing.TB, space index.Space, code index.Code) (*index.Index, [][]float32, func(uint32) []byte) {
	t.Helper()
	r := rand.New(rand.NewPCG(21, 22))
	data := clustered(r, 1500, 16, 8, 0.5)
	x := newChecked(t, index.Options{Dim: 16, Space: space, M: 6, EfConstruction: 40, EfSearch: 30, Seed: 3, Workers: 1, Code: code})
	if code == index.SQ8Residual {
		// Fewer vectors than training needs: any table will do.
		var table []float32
		for _, v := range data[:24] {
			if space == index.Cosine {
				v = unit(v)
			}
			table = append(table, v...)
		}
		if err := x.SetCentroids(table); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.InsertBatch(t.Context(), seqIDs(0, len(data)), data); err != nil {
		t.Fatal(err)
	}
	for id := uint32(0); id < uint32(len(data)); id += 9 {
		if err := x.Delete(id); err != nil {
			t.Fatal(err)
		}
	}
	stored := make([][]byte, len(data))
	for i, v := range data {
		if code == index.SQ8Residual {
			row, ok, err := x.AppendRow(nil, uint32(i))
			if err == nil && !ok { // a tombstone: the row it was inserted with
				row, err = x.EncodeRow(nil, v)
			}
			if err != nil {
				t.Fatal(err)
			}
			stored[i] = row
			continue
		}
		if code == index.SQ8 {
			held, ok := x.Vector(uint32(i))
			if !ok { // a tombstone, which the index still routes through
				held = v
				if space == index.Cosine {
					held = unit(v)
				}
			}
			if space == index.Cosine {
				stored[i] = index.AppendSQ8Unit(nil, held)
			} else {
				stored[i] = index.AppendSQ8(nil, held)
			}
			continue
		}
		for _, f := range v {
			stored[i] = binary.LittleEndian.AppendUint32(stored[i], math.Float32bits(f))
		}
	}
	return x, data, func(id uint32) []byte { return stored[id] }
}

func unit(v []float32) []float32 {
	var ss float64
	for _, f := range v {
		ss += float64(f) * float64(f)
	}
	out := make([]float32, len(v))
	for i, f := range v {
		out[i] = float32(float64(f) / math.Sqrt(ss))
	}
	return out
}

// TestViewSearch: a View of MarshalGraph's output, given the stored
// vectors, finds what the index finds at the same beam: the same ids and
// distances for float32; for SQ8, whose codes the View takes as stored,
// nearly all the same ids at distances within round-off.
func TestViewSearch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		space index.Space
		code  index.Code
	}{
		{"cosine", index.Cosine, index.Float32}, {"l2", index.L2, index.Float32}, {"ip", index.IP, index.Float32},
		{"cosine-sq8", index.Cosine, index.SQ8}, {"l2-sq8", index.L2, index.SQ8},
		{"cosine-sq8r", index.Cosine, index.SQ8Residual}, {"l2-sq8r", index.L2, index.SQ8Residual},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, data, stored := viewFixture(t, tc.space, tc.code)
			raw, err := x.MarshalGraph()
			if err != nil {
				t.Fatal(err)
			}
			v, err := index.OpenView(raw)
			if err != nil {
				t.Fatal(err)
			}
			vo, xo := v.Options(), x.Options()
			vo.Workers = xo.Workers // not serialized
			if v.Len() != x.Len() || vo != xo {
				t.Fatalf("view: %d live, options %+v; index %d, %+v", v.Len(), v.Options(), x.Len(), x.Options())
			}
			r := rand.New(rand.NewPCG(5, 6))
			same, total := 0, 0
			for range 40 {
				q := data[r.IntN(len(data))]
				q = append([]float32(nil), q...)
				q[0] += 0.1
				const k, ef = 10, 40
				want, err := x.Search(q, k, index.SearchOptions{Ef: ef})
				if err != nil {
					t.Fatal(err)
				}
				pq, err := v.Prepare(q)
				if err != nil {
					t.Fatal(err)
				}
				got, err := v.Search(pq, ef, nil, stored)
				if err != nil {
					t.Fatal(err)
				}
				got = got[:min(k, len(got))]
				if len(got) != len(want) {
					t.Fatalf("%d results, want %d", len(got), len(want))
				}
				for i := range want {
					if !v.Live(got[i].ID) || got[i].ID%9 == 0 {
						t.Fatalf("returned %d, not live", got[i].ID)
					}
					total++
					if got[i].ID == want[i].ID {
						same++
					}
					tol := 1e-5
					if tc.code == index.SQ8 {
						tol = 2e-2 * (1 + math.Abs(float64(want[i].Distance)))
					}
					if math.Abs(float64(got[i].Distance-want[i].Distance)) > tol {
						t.Fatalf("result %d: %d at %v, index %d at %v", i, got[i].ID, got[i].Distance, want[i].ID, want[i].Distance)
					}
				}
			}
			if tc.code == index.SQ8Residual {
				// Rows as stored: the same codes the index holds.
				for id := uint32(1); id < uint32(len(data)); id += 9 {
					got, ok := v.DecodeRow(stored(id))
					want, _ := x.Vector(id)
					if !ok || !slices.Equal(got, want) {
						t.Fatalf("DecodeRow(%d) = %v, %v; index holds %v", id, got, ok, want)
					}
				}
			}
			if (tc.code == index.Float32 || tc.code == index.SQ8Residual) && same != total {
				t.Errorf("%d of %d results differ from the index's", total-same, total)
			}
			if float64(same) < 0.9*float64(total) {
				t.Errorf("only %d of %d results as the index's", same, total)
			}
		})
	}
}

// TestViewDamaged: damaged data is refused as corrupt; a vector of the
// wrong length is reported, never a panic.
func TestViewDamaged(t *testing.T) {
	x, _, stored := viewFixture(t, index.L2, index.Float32)
	raw, err := x.MarshalGraph()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(raw); i += 1 + i/32 {
		d := bytes.Clone(raw)
		d[i] ^= 0x40
		if _, err := index.OpenView(d); !errors.Is(err, index.ErrCorrupt) && !errors.Is(err, index.ErrUnsupportedVersion) {
			t.Fatalf("flip byte %d: err = %v", i, err)
		}
	}
	for _, n := range []int{0, 8, len(raw) / 2, len(raw) - 1} {
		if _, err := index.OpenView(raw[:n]); !errors.Is(err, index.ErrCorrupt) {
			t.Errorf("truncated to %d: %v", n, err)
		}
	}
	v, err := index.OpenView(raw)
	if err != nil {
		t.Fatal(err)
	}
	pq, err := v.Prepare(make([]float32, 16))
	if err != nil {
		t.Fatal(err)
	}
	short := func(id uint32) []byte { return stored(id)[:8] }
	if _, err := v.Search(pq, 10, nil, short); !errors.Is(err, index.ErrCorrupt) {
		t.Errorf("short vectors: %v", err)
	}
	if _, err := v.Prepare(make([]float32, 3)); !errors.Is(err, index.ErrDimensionMismatch) {
		t.Errorf("query of dimension 3: %v", err)
	}
}

func FuzzView(f *testing.F) {
	x, _, _ := viewFixture(f, index.Cosine, index.SQ8)
	raw, err := x.MarshalGraph()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw, true)
	f.Add([]byte("CAIRNHNS"), true)
	f.Fuzz(func(t *testing.T, data []byte, withCRC bool) {
		if withCRC && len(data) >= 4 {
			data = bytes.Clone(data)
			fixCRC(data)
		}
		v, err := index.OpenView(data)
		if err != nil {
			if !errors.Is(err, index.ErrCorrupt) && !errors.Is(err, index.ErrUnsupportedVersion) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		dim := v.Options().Dim
		q := make([]float32, dim)
		q[0] = 1
		pq, err := v.Prepare(q)
		if err != nil {
			t.Fatal(err)
		}
		vec := make([]byte, 4*dim)
		if v.Options().Code == index.SQ8 {
			vec = index.AppendSQ8(nil, q)
		}
		if _, err := v.Search(pq, 5, nil, func(uint32) []byte { return vec }); err != nil {
			t.Fatal(err)
		}
	})
}

// TestViewTombstonesWithoutVectors: when the records of deleted slots are
// gone with their vectors (the entry point among them), the search starts
// from a neighbour and still finds the live nearest.
func TestViewTombstonesWithoutVectors(t *testing.T) {
	x, data, stored := viewFixture(t, index.Cosine, index.SQ8)
	raw, err := x.MarshalGraph()
	if err != nil {
		t.Fatal(err)
	}
	v, err := index.OpenView(raw)
	if err != nil {
		t.Fatal(err)
	}
	liveOnly := func(id uint32) []byte {
		if !v.Live(id) {
			return nil
		}
		return stored(id)
	}
	same, total := 0, 0
	for i := 1; i < len(data); i += 97 {
		want, err := x.Search(data[i], 10, index.SearchOptions{Ef: 40})
		if err != nil {
			t.Fatal(err)
		}
		pq, err := v.Prepare(data[i])
		if err != nil {
			t.Fatal(err)
		}
		got, err := v.Search(pq, 40, nil, liveOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			total++
			for _, g := range got[:min(10, len(got))] {
				if g.ID == w.ID {
					same++
					break
				}
			}
		}
	}
	if float64(same) < 0.9*float64(total) {
		t.Errorf("%d of %d of the index's results found", same, total)
	}
}
