package index_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/index"
)

// TestSQ8Residual: in every space, a search's distances are the space's
// distance to the vector Vector decodes (the residual code's distance
// formula agrees with its decoding), decoded vectors are within a few
// steps of what was inserted, and recall against the exact scan holds;
// recoding a float32 index gives the same properties.
func TestSQ8Residual(t *testing.T) {
	const n, dim = 6000, 48
	vecs, queries, ids := clusteredSet(t, n, dim, 40)
	for _, space := range raceSpaces(index.Cosine, index.L2, index.IP) {
		for _, recode := range []bool{false, true} {
			code := index.SQ8Residual
			if recode {
				code = index.Float32
			}
			x := newChecked(t, index.Options{Space: space, Dim: dim, Code: code, Seed: 3, Workers: 2})
			if err := x.InsertBatch(context.Background(), ids, vecs); err != nil {
				t.Fatal(err)
			}
			if recode {
				if err := x.Recode(index.SQ8Residual); err != nil {
					t.Fatal(err)
				}
			}
			var maxErr float64
			for id := range n {
				v, ok := x.Vector(uint32(id))
				if !ok {
					t.Fatalf("%v: %d not live", space, id)
				}
				for i := range v {
					maxErr = max(maxErr, math.Abs(float64(v[i]-vecs[id][i])))
				}
			}
			if maxErr > 0.01 {
				t.Errorf("%v recode=%v: decoded vectors off by up to %g", space, recode, maxErr)
			}
			checkDecodedDistances(t, x, space, queries)
			if recall := recallAt(t, x, queries, 10, index.SearchOptions{Ef: 100}); recall < 0.95 {
				t.Errorf("%v recode=%v: recall@10 %.3f below 0.95", space, recode, recall)
			}
		}
	}
}

// clusteredSet returns n clustered vectors, 50 queries from the same
// clusters and the ids 0..n-1.
func clusteredSet(t testing.TB, n, dim, clusters int) (vecs, queries [][]float32, ids []uint32) {
	t.Helper()
	r := testRand(t)
	vecs = clustered(r, n, dim, clusters, 0.3)
	queries = clustered(r, 50, dim, clusters, 0.3)
	ids = make([]uint32, n)
	for i := range ids {
		ids[i] = uint32(i)
	}
	return vecs, queries, ids
}

// raceSpaces returns spaces, or under the race detector only the first:
// the detector watches the parallel build and searches, which are the same
// in every space; each space's arithmetic is checked without -race.
func raceSpaces(spaces ...index.Space) []index.Space {
	if index.RaceEnabled {
		return spaces[:1]
	}
	return spaces
}

func spaceDist(space index.Space, q, v []float32) float32 {
	var dot, l2, qq float64
	for i := range q {
		dot += float64(q[i]) * float64(v[i])
		d := float64(q[i] - v[i])
		l2 += d * d
		qq += float64(q[i]) * float64(q[i])
	}
	switch space {
	case index.Cosine:
		return float32(1 - dot/math.Sqrt(qq))
	case index.L2:
		return float32(l2)
	}
	return float32(1 - dot)
}

// TestSQ8ResidualMarshal: MarshalBinary keeps the centroid table and every
// row (searches give the same results and distances after Unmarshal), and
// the file is version 4 while the other codes still write version 3.
func TestSQ8ResidualMarshal(t *testing.T) {
	if index.RaceEnabled {
		t.Skip("marshalling is sequential; the detector watches the parallel sq8r build in TestSQ8Residual")
	}
	r := testRand(t)
	const n, dim = 5000, 32
	vecs := clustered(r, n, dim, 30, 0.3)
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = uint32(i)
	}
	var other *index.View
	for _, space := range raceSpaces(index.Cosine, index.L2) {
		x := newChecked(t, index.Options{Space: space, Dim: dim, Code: index.SQ8Residual, Seed: 5, Workers: 2})
		if err := x.InsertBatch(context.Background(), ids, vecs); err != nil {
			t.Fatal(err)
		}
		b, err := x.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if v := binary.LittleEndian.Uint32(b[8:]); v != 5 { // trained tables are 8-bit exact
			t.Fatalf("sq8r written as version %d, want 5", v)
		}
		y, err := index.Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := y.Check(); err != nil {
			t.Fatal(err)
		}
		for _, q := range vecs[:40] {
			a, _ := x.Search(q, 10, index.SearchOptions{Ef: 50})
			c, _ := y.Search(q, 10, index.SearchOptions{Ef: 50})
			if !slices.Equal(a, c) {
				t.Fatalf("%v: after Unmarshal %v, before %v", space, c, a)
			}
		}
		// A View of the file takes the table from it and the rows from the
		// caller, and finds what the index finds.
		v, err := index.OpenView(b)
		if err != nil {
			t.Fatal(err)
		}
		rowOf := func(id uint32) []byte {
			row, _, _ := x.AppendRow(nil, id)
			return row
		}
		for _, q := range vecs[:40] {
			a, _ := x.Search(q, 10, index.SearchOptions{Ef: 50})
			pq, err := v.Prepare(q)
			if err != nil {
				t.Fatal(err)
			}
			c, err := v.Search(pq, 50, nil, rowOf)
			if err != nil {
				t.Fatal(err)
			}
			if c = c[:min(10, len(c))]; !slices.Equal(a, c) {
				t.Fatalf("%v: View %v, index %v", space, c, a)
			}
		}
		// Reopened from a View of the same bytes (whose memory is gone
		// since) or of another table (the other space's), a View finds
		// and decodes what a fresh one does.
		cp := slices.Clone(b)
		same, err := index.OpenView(cp)
		if err != nil {
			t.Fatal(err)
		}
		clear(cp)
		for _, from := range []*index.View{same, other} {
			if from == nil {
				continue
			}
			w, err := from.Reopen(b)
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range vecs[:20] {
				pv, _ := v.Prepare(q)
				pw, err := w.Prepare(q)
				if err != nil {
					t.Fatal(err)
				}
				a, _ := v.Search(pv, 50, nil, rowOf)
				c, err := w.Search(pw, 50, nil, rowOf)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(a, c) {
					t.Fatalf("%v: reopened View %v, fresh %v", space, c, a)
				}
				dv, _ := v.DecodeRow(rowOf(uint32(i)))
				dw, ok := w.DecodeRow(rowOf(uint32(i)))
				if !ok || !slices.Equal(dv, dw) {
					t.Fatalf("%v: reopened View decodes row %d as %v, fresh %v", space, i, dw, dv)
				}
			}
		}
		other = v
		for i := range b[:len(b)-4] {
			if i%97 != 0 {
				continue
			}
			c := slices.Clone(b)
			c[i] ^= 0x5a
			if _, err := index.Unmarshal(c); err == nil {
				t.Fatalf("byte %d flipped: no error", i)
			}
		}
	}
	f := newChecked(t, index.Options{Dim: dim, Code: index.SQ8})
	if err := f.Insert(1, vecs[0]); err != nil {
		t.Fatal(err)
	}
	b, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != 3 {
		t.Fatalf("sq8 written as version %d, want 3", v)
	}
}

// TestFixtureV4 opens the frozen version-4 file (an sq8r index, trained,
// with its vectors; the centroid table in float32) forever.
func TestFixtureV4(t *testing.T) { testFixtureSQ8R(t, "v4-sq8r.bin", 4) }

// TestFixtureV5 opens the frozen version-5 file (the same index, its
// centroid table in 8 bits) forever.
func TestFixtureV5(t *testing.T) { testFixtureSQ8R(t, "v5-sq8r.bin", 5) }

// testFixtureSQ8R opens the frozen file testdata/name, of format version,
// holding 4,200 clustered vectors in a trained sq8r index. Run with -run
// TestFixtureVn -args -rewrite only to freeze a missing one (it is written
// in the current version).
func testFixtureSQ8R(t *testing.T, name string, version uint32) {
	path := filepath.Join("testdata", name)
	r := rand.New(rand.NewPCG(4, 4))
	vecs := clustered(r, 4200, 6, 50, 0.2)
	b := frozenFixture(t, path, func() ([]byte, error) {
		x := newChecked(t, index.Options{Space: index.Cosine, Dim: 6, M: 4, Seed: 4, Workers: 1, Code: index.SQ8Residual})
		for i, v := range vecs {
			if err := x.Insert(uint32(i), v); err != nil {
				return nil, err
			}
		}
		if err := x.Recode(index.SQ8Residual); err != nil { // no-op: already sq8r
			return nil, err
		}
		if err := x.Recode(index.Float32); err != nil {
			return nil, err
		}
		if err := x.Recode(index.SQ8Residual); err != nil { // trains on the 4,200
			return nil, err
		}
		return x.MarshalBinary()
	})
	if v := binary.LittleEndian.Uint32(b[8:]); v != version {
		t.Fatalf("%s is version %d, want %d", path, v, version)
	}
	y, err := index.Unmarshal(b)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	if err := y.Check(); err != nil {
		t.Fatal(err)
	}
	if o := y.Options(); y.Len() != 4200 || o.Code != index.SQ8Residual || o.Dim != 6 || o.M != 4 {
		t.Fatalf("Len %d, options %+v", y.Len(), o)
	}
	for id, v := range vecs[:50] {
		res, err := y.Search(v, 1, index.SearchOptions{Ef: 50})
		if err != nil || len(res) != 1 || res[0].Distance > 1e-3 {
			t.Fatalf("search for %d = %v, %v", id, res, err)
		}
	}
}

// TestSQ8ResidualIncremental: an index filled a few vectors at a time (as
// a message collection is) trains on the insert that reaches 4,096
// vectors; the rows it held keep their plain SQ8 code (they decode as an
// SQ8 index decodes them), later rows are residuals, and searches stay
// consistent and accurate across both kinds. One worker builds both
// graphs, so that the recall is the same in every run: the parallel
// sq8r build is TestSQ8Residual's.
func TestSQ8ResidualIncremental(t *testing.T) {
	r := testRand(t)
	const n, dim, batch, trainAt = 5000, 48, 50, 4096
	vecs := clustered(r, n, dim, 40, 0.3)
	queries := clustered(r, 50, dim, 40, 0.3)
	for _, space := range raceSpaces(index.Cosine, index.L2) {
		x := newChecked(t, index.Options{Space: space, Dim: dim, Code: index.SQ8Residual, Seed: 3, Workers: 1})
		plain := newChecked(t, index.Options{Space: space, Dim: dim, Code: index.SQ8, Seed: 3, Workers: 1})
		for lo := 0; lo < n; lo += batch {
			ids := make([]uint32, batch)
			for i := range ids {
				ids[i] = uint32(lo + i)
			}
			if x.Centroids() != nil && lo < trainAt-batch {
				t.Fatalf("%v: trained at %d vectors", space, lo)
			}
			for _, y := range []*index.Index{x, plain} {
				if err := y.InsertBatch(context.Background(), ids, vecs[lo:lo+batch]); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got := len(x.Centroids()); got != 1024*dim {
			t.Fatalf("%v: %d centroid floats after %d inserts, want %d", space, got, n, 1024*dim)
		}
		for id := range n {
			got, _ := x.Vector(uint32(id))
			if id < trainAt-batch {
				want, _ := plain.Vector(uint32(id))
				for i := range got {
					if math.Abs(float64(got[i]-want[i])) > 1e-6 {
						t.Fatalf("%v: row %d (before training) decodes to %v, SQ8 to %v at %d", space, id, got[i], want[i], i)
					}
				}
			}
		}
		checkDecodedDistances(t, x, space, queries)
		if recall := recallAt(t, x, queries, 10, index.SearchOptions{Ef: 100}); recall < 0.95 {
			t.Errorf("%v: recall@10 %.3f below 0.95", space, recall)
		}
	}
}

// TestSQ8RecodeToResidualKeepsRows: recoding an SQ8 index to SQ8Residual
// trains the centroids and keeps every row bit for bit (the decoded
// vectors are unchanged); vectors inserted afterwards are residuals, and
// the index round-trips through MarshalBinary.
func TestSQ8RecodeToResidualKeepsRows(t *testing.T) {
	r := testRand(t)
	const n, more, dim = 4500, 500, 32
	vecs := clustered(r, n+more, dim, 30, 0.3)
	ids := make([]uint32, n+more)
	for i := range ids {
		ids[i] = uint32(i)
	}
	for _, space := range raceSpaces(index.Cosine, index.L2, index.IP) {
		x := newChecked(t, index.Options{Space: space, Dim: dim, Code: index.SQ8, Seed: 9, Workers: 2})
		if err := x.InsertBatch(context.Background(), ids[:n], vecs[:n]); err != nil {
			t.Fatal(err)
		}
		before := make([][]float32, n)
		for id := range n {
			before[id], _ = x.Vector(uint32(id))
		}
		q := vecs[0]
		want, err := x.Search(q, 10, index.SearchOptions{Ef: 64})
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Recode(index.SQ8Residual); err != nil {
			t.Fatal(err)
		}
		if x.Centroids() == nil {
			t.Fatalf("%v: no centroids after Recode of %d vectors", space, n)
		}
		for id := range n {
			got, _ := x.Vector(uint32(id))
			if !slices.Equal(got, before[id]) {
				t.Fatalf("%v: row %d changed by Recode", space, id)
			}
		}
		got, err := x.Search(q, 10, index.SearchOptions{Ef: 64})
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i].ID != want[i].ID || math.Abs(float64(got[i].Distance-want[i].Distance)) > 1e-5 {
				t.Fatalf("%v: result %d after Recode %v, before %v", space, i, got[i], want[i])
			}
		}
		if err := x.InsertBatch(context.Background(), ids[n:], vecs[n:]); err != nil {
			t.Fatal(err)
		}
		raw, err := x.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		y, err := index.Unmarshal(raw)
		if err != nil {
			t.Fatal(err)
		}
		for id := range n + more {
			a, _ := x.Vector(uint32(id))
			b, _ := y.Vector(uint32(id))
			if !slices.Equal(a, b) {
				t.Fatalf("%v: row %d differs after Unmarshal", space, id)
			}
		}
	}
}

// TestSQ8ResidualRows follows a caller that stores an SQ8Residual index's
// rows itself: it trains the table, keeps it in 8 bits and installs what it
// kept, codes each vector with EncodeRow, inserts the rows as stored, and
// loads the graph back from MarshalGraph and its rows. The rows it gets
// back are the ones it stored, searches agree with the decoded vectors
// and with the index before the round trip, and bad rows are refused
// before anything changes.
func TestSQ8ResidualRows(t *testing.T) {
	if index.RaceEnabled {
		t.Skip("the caller's row path is sequential; the detector watches the parallel sq8r build in TestSQ8Residual")
	}
	const n, dim = 5000, 32
	vecs, queries, ids := clusteredSet(t, n, dim, 30)
	for _, space := range raceSpaces(index.Cosine, index.L2) {
		x := newChecked(t, index.Options{Space: space, Dim: dim, Code: index.SQ8Residual, Seed: 4, Workers: 2})
		table, err := x.TrainCentroids(vecs)
		if err != nil {
			t.Fatal(err)
		}
		// The caller keeps the table in 8 bits a component.
		var kept []float32
		for k := 0; k < len(table); k += dim {
			c, err := index.DecodeSQ8(index.AppendSQ8(nil, table[k:k+dim]))
			if err != nil {
				t.Fatal(err)
			}
			kept = append(kept, c...)
		}
		if err := x.SetCentroids(kept); err != nil {
			t.Fatal(err)
		}
		if err := x.SetCentroids(kept); err == nil {
			t.Fatalf("%v: a second SetCentroids succeeded", space)
		}
		rows := make([][]byte, n)
		for i, v := range vecs {
			if rows[i], err = x.EncodeRow(nil, v); err != nil {
				t.Fatal(err)
			}
			if len(rows[i]) != index.RowLen(dim) {
				t.Fatalf("row of %d bytes, RowLen %d", len(rows[i]), index.RowLen(dim))
			}
		}

		bad := slices.Clone(rows[7])
		binary.LittleEndian.PutUint16(bad[12:], uint16(len(kept)/dim)) // no such centroid
		for _, b := range [][]byte{bad, rows[7][:len(rows[7])-1]} {
			if err := x.InsertRows(context.Background(), []uint32{0, 1}, [][]byte{rows[0], b}); !errors.Is(err, index.ErrInvalidVector) {
				t.Fatalf("%v: bad row: err %v, want ErrInvalidVector", space, err)
			}
			if x.Len() != 0 {
				t.Fatalf("%v: a refused batch left %d vectors", space, x.Len())
			}
		}

		if err := x.InsertRows(context.Background(), ids, rows); err != nil {
			t.Fatal(err)
		}
		if err := x.Delete(3); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			got, ok, err := x.AppendRow(nil, uint32(i))
			if err != nil || ok != (i != 3) || (ok && !bytes.Equal(got, rows[i])) {
				t.Fatalf("%v: AppendRow(%d) = %x, %v, %v; stored %x", space, i, got, ok, err, rows[i])
			}
		}
		checkDecodedDistances(t, x, space, queries)
		if recall := recallAt(t, x, queries, 10, index.SearchOptions{Ef: 100}); recall < 0.95 {
			t.Errorf("%v: recall@10 %.3f below 0.95", space, recall)
		}

		raw, err := x.MarshalGraph()
		if err != nil {
			t.Fatal(err)
		}
		y, err := index.UnmarshalGraphRows(raw, func(id uint32) ([]byte, error) {
			if id == 3 {
				return nil, nil
			}
			return rows[id], nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(y.Centroids(), kept) {
			t.Fatalf("%v: the loaded table differs from the installed one", space)
		}
		for i := range n {
			a, _, _ := x.AppendRow(nil, uint32(i))
			b, _, _ := y.AppendRow(nil, uint32(i))
			if !bytes.Equal(a, b) {
				t.Fatalf("%v: row %d differs after UnmarshalGraphRows", space, i)
			}
		}
		for _, q := range queries {
			want, _ := x.Search(q, 10, index.SearchOptions{Ef: 64})
			got, _ := y.Search(q, 10, index.SearchOptions{Ef: 64})
			if !slices.Equal(got, want) {
				t.Fatalf("%v: search after UnmarshalGraphRows %v, before %v", space, got, want)
			}
		}
	}

	// InsertRows never trains: rows coded without centroids stay so.
	x := newChecked(t, index.Options{Space: index.Cosine, Dim: dim, Code: index.SQ8Residual, Workers: 2})
	rows := make([][]byte, n)
	for i, v := range vecs {
		rows[i], _ = x.EncodeRow(nil, v)
	}
	if err := x.InsertRows(context.Background(), ids, rows); err != nil {
		t.Fatal(err)
	}
	if x.Centroids() != nil {
		t.Fatal("InsertRows trained the index")
	}

	plain := newChecked(t, index.Options{Dim: dim, Code: index.SQ8})
	if _, err := plain.EncodeRow(nil, vecs[0]); !errors.Is(err, index.ErrNotResidual) {
		t.Fatalf("EncodeRow on SQ8: %v, want ErrNotResidual", err)
	}
	if err := plain.InsertRows(context.Background(), ids[:1], rows[:1]); !errors.Is(err, index.ErrNotResidual) {
		t.Fatalf("InsertRows on SQ8: %v, want ErrNotResidual", err)
	}
}

// checkDecodedDistances: each result's distance is the space's distance to
// the vector Vector decodes.
func checkDecodedDistances(t *testing.T, x *index.Index, space index.Space, queries [][]float32) {
	t.Helper()
	for _, q := range queries {
		rs, err := x.Search(q, 10, index.SearchOptions{Ef: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, res := range rs {
			v, _ := x.Vector(res.ID)
			if want := spaceDist(space, q, v); math.Abs(float64(res.Distance-want)) > 1e-4 {
				t.Fatalf("%v: distance to %d = %g, decoded vector gives %g", space, res.ID, res.Distance, want)
			}
		}
	}
}

// FuzzSQ8ResidualRow: InsertRows refuses a damaged row with
// ErrInvalidVector and otherwise leaves an index that searches and passes
// Check.
func FuzzSQ8ResidualRow(f *testing.F) {
	const dim = 8
	table := make([]float32, 3*dim)
	for i := range table {
		table[i] = float32(i%5) / 5
	}
	seed := newResidualForFuzz(f, table)
	good, err := seed.EncodeRow(nil, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(make([]byte, index.RowLen(dim)))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, row []byte) {
		x := newResidualForFuzz(t, table)
		if err := x.InsertRows(context.Background(), []uint32{0, 1}, [][]byte{good, row}); err != nil {
			if !errors.Is(err, index.ErrInvalidVector) {
				t.Fatalf("error %v is not ErrInvalidVector", err)
			}
			return
		}
		if _, err := x.Search([]float32{1, 0, 0, 0, 0, 0, 0, 1}, 2, index.SearchOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := x.Check(); err != nil {
			t.Fatalf("Check: %v", err)
		}
	})
}

func newResidualForFuzz(t testing.TB, table []float32) *index.Index {
	t.Helper()
	x, err := index.New(index.Options{Dim: 8, Space: index.L2, Code: index.SQ8Residual, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.SetCentroids(table); err != nil {
		t.Fatal(err)
	}
	return x
}
