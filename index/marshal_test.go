package index_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/index"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata fixtures")

// frozenFixture returns the bytes of the frozen file at path. With
// -rewrite, and only where no file is there yet, it first writes what
// freeze returns (in the current format version): a fixture holds its
// version forever, so an existing one is never written again.
func frozenFixture(t *testing.T, path string, freeze func() ([]byte, error)) []byte {
	t.Helper()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && *rewrite {
		b, err := freeze()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// smallIndex builds a deterministic index with tombstones.
func smallIndex(t testing.TB, space index.Space) *index.Index {
	t.Helper()
	r := rand.New(rand.NewPCG(11, 12))
	data := clustered(r, 300, 8, 6, 0.5)
	x := newChecked(t, index.Options{Dim: 8, Space: space, M: 4, EfConstruction: 32, EfSearch: 20, Seed: 5, Workers: 1})
	for i, v := range data {
		if err := x.Insert(uint32(i), v); err != nil {
			t.Fatal(err)
		}
	}
	for id := uint32(0); id < 300; id += 7 {
		if err := x.Delete(id); err != nil {
			t.Fatal(err)
		}
	}
	return x
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, space := range []index.Space{index.Cosine, index.L2, index.IP} {
		x := smallIndex(t, space)
		b, err := x.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		y, err := index.Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if y.Len() != x.Len() || y.Options().M != 4 || y.Options().Space != space {
			t.Errorf("decoded Len %d options %+v", y.Len(), y.Options())
		}
		b2, err := y.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
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
		// The decoded index keeps working.
		if err := y.Insert(1000, make([]float32, 8)); err != nil {
			t.Fatal(err)
		}
		if err := y.Check(); err != nil {
			t.Fatal(err)
		}
	}
	empty := newChecked(t, index.Options{Dim: 3})
	b, _ := empty.MarshalBinary()
	y, err := index.Unmarshal(b)
	if err != nil || y.Len() != 0 {
		t.Fatalf("empty round trip: %v", err)
	}
}

// TestFixtureV1 opens the frozen version-1 file forever. Run with -rewrite
// only when deliberately freezing a new fixture.
func TestFixtureV1(t *testing.T) {
	b := frozenFixture(t, filepath.Join("testdata", "v1.bin"), func() ([]byte, error) {
		return smallIndex(t, index.Cosine).MarshalBinary()
	})
	x, err := index.Unmarshal(b)
	if err != nil {
		t.Fatalf("open fixture: %v", err)
	}
	if err := x.Check(); err != nil {
		t.Fatal(err)
	}
	if got, want := x.Len(), 300-43; got != want {
		t.Errorf("fixture Len = %d, want %d", got, want)
	}
	o := x.Options()
	if o.Space != index.Cosine || o.Dim != 8 || o.M != 4 || o.EfConstruction != 32 || o.EfSearch != 20 || o.Seed != 5 {
		t.Errorf("fixture options = %+v", o)
	}
	if x.Contains(0) || x.Contains(7) || !x.Contains(1) {
		t.Errorf("fixture tombstones wrong")
	}
	q, _ := x.Vector(1)
	res, err := x.Search(q, 3, index.SearchOptions{})
	if err != nil || len(res) != 3 || res[0].ID != 1 || res[0].Distance > 1e-6 {
		t.Errorf("fixture search = %v, %v", res, err)
	}
	exact, _ := x.Exact(q, 3, nil)
	if !slices.Equal(res, exact) {
		t.Errorf("fixture search %v, exact %v", res, exact)
	}
}

func TestUnmarshalDamaged(t *testing.T) {
	b, err := smallIndex(t, index.L2).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	sq := smallIndex(t, index.L2)
	if err := sq.Recode(index.SQ8); err != nil {
		t.Fatal(err)
	}
	bsq, err := sq.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, enc := range [][]byte{b, bsq} {
		for i := 0; i < len(enc); i += 1 + i/64 {
			d := bytes.Clone(enc)
			d[i] ^= 0x40
			if _, err := index.Unmarshal(d); !errors.Is(err, index.ErrCorrupt) && !errors.Is(err, index.ErrUnsupportedVersion) {
				t.Fatalf("flip byte %d: err = %v", i, err)
			}
		}
	}
	for _, n := range []int{0, 1, 8, 20, len(b) / 2, len(b) - 1} {
		if _, err := index.Unmarshal(b[:n]); !errors.Is(err, index.ErrCorrupt) {
			t.Errorf("truncated to %d: %v", n, err)
		}
	}
	if _, err := index.Unmarshal(append(bytes.Clone(b), 0)); !errors.Is(err, index.ErrCorrupt) {
		t.Errorf("trailing byte: %v", err)
	}
	newer := bytes.Clone(b)
	binary.LittleEndian.PutUint32(newer[8:], 6)
	fixCRC(newer)
	if _, err := index.Unmarshal(newer); !errors.Is(err, index.ErrUnsupportedVersion) {
		t.Errorf("version 6: %v", err)
	}
	// A valid checksum over inconsistent content is still refused.
	bad := bytes.Clone(b)
	binary.LittleEndian.PutUint32(bad[12+4:], 9) // dim 9 instead of 8
	fixCRC(bad)
	if _, err := index.Unmarshal(bad); !errors.Is(err, index.ErrCorrupt) {
		t.Errorf("wrong dim: %v", err)
	}
}

func fixCRC(b []byte) {
	n := len(b) - 4
	binary.LittleEndian.PutUint32(b[n:], crc32.Checksum(b[:n], crc32.MakeTable(crc32.Castagnoli)))
}

func FuzzUnmarshal(f *testing.F) {
	b, err := smallIndex(f, index.Cosine).MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b, false)
	f.Add(b, true)
	for _, name := range []string{"v1.bin", "v2-float32.bin", "v2-sq8.bin", "v3-float32.bin", "v3-sq8-graph.bin", "v4-sq8r.bin", "v5-sq8r.bin"} {
		if fx, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(fx, true)
		}
	}
	f.Add([]byte("CAIRNHNS"), true)
	f.Fuzz(func(t *testing.T, data []byte, withCRC bool) {
		if withCRC && len(data) >= 4 {
			data = bytes.Clone(data)
			fixCRC(data)
		}
		x, err := index.Unmarshal(data)
		if err != nil {
			if !errors.Is(err, index.ErrCorrupt) && !errors.Is(err, index.ErrUnsupportedVersion) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if err := x.Check(); err != nil {
			t.Fatalf("decoded index fails Check: %v", err)
		}
		q := make([]float32, x.Options().Dim)
		q[0] = 1
		if _, err := x.Search(q, 3, index.SearchOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := x.Insert(0, q); err != nil {
			t.Fatal(err)
		}
		if err := x.Check(); err != nil {
			t.Fatalf("after insert: %v", err)
		}
	})
}
