package vecstore_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/internal/racedetector"
	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
	bolt "go.etcd.io/bbolt"
)

func openOneShot(t testing.TB, dir string) *vecstore.Store {
	t.Helper()
	s, err := vecstore.Open(context.Background(), dir, vecstore.Options{OneShot: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// queryAll runs q against coll with every field included.
func queryAll(t testing.TB, s *vecstore.Store, coll string, q []float32, k int) *chroma.QueryResult {
	t.Helper()
	res, err := s.Query(context.Background(), coll, chroma.QueryRequest{Embeddings: [][]float32{q}, NResults: &k,
		Include: []chroma.Include{chroma.IncludeDistances, chroma.IncludeDocuments, chroma.IncludeMetadatas, chroma.IncludeEmbeddings}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// sameAnswer compares a one-shot store's answer with the loaded store's:
// the same ids in the same order (a neighbour swapped for another at the
// same distance up to round-off is tolerated), the same documents and
// metadata, distances and embeddings equal within tol.
func sameAnswer(t *testing.T, what string, got, want *chroma.QueryResult, tol float64) {
	t.Helper()
	g, w := got.IDs[0], want.IDs[0]
	if len(g) != len(w) {
		t.Fatalf("%s: %d hits, want %d", what, len(g), len(w))
	}
	for i := range w {
		if g[i] != w[i] {
			// Neighbours at equal distances up to round-off.
			if math.Abs(float64(got.Distances[0][i]-want.Distances[0][i])) > tol {
				t.Fatalf("%s: hit %d is %s (distance %v), want %s (distance %v)", what, i, g[i], got.Distances[0][i], w[i], want.Distances[0][i])
			}
			continue
		}
		if d := math.Abs(float64(got.Distances[0][i] - want.Distances[0][i])); d > tol {
			t.Errorf("%s: %s distance %v, want %v", what, g[i], got.Distances[0][i], want.Distances[0][i])
		}
		if !reflect.DeepEqual(got.Documents[0][i], want.Documents[0][i]) || !reflect.DeepEqual(got.Metadatas[0][i], want.Metadatas[0][i]) {
			t.Errorf("%s: %s document or metadata differ", what, g[i])
		}
		for c := range want.Embeddings[0][i] {
			if math.Abs(float64(got.Embeddings[0][i][c]-want.Embeddings[0][i][c])) > 10*tol*(1+math.Abs(float64(want.Embeddings[0][i][c]))) {
				t.Fatalf("%s: %s embedding[%d] %v, want %v", what, g[i], c, got.Embeddings[0][i][c], want.Embeddings[0][i][c])
			}
		}
	}
}

// TestOneShotReadsInPlace: a one-shot store answers unfiltered queries and
// gets by id from the file without loading the collection, and its answers
// are those of a store that loads it: right after a snapshot, and after
// adds, updates and deletes written since (the change log), for an SQ8
// cosine and a float32 L2 collection.
func TestOneShotReadsInPlace(t *testing.T) {
	ctx := context.Background()
	n := 4000
	if testing.Short() {
		n = 2500 // above ExactMax (2048), so the graph is searched
	}
	cases := []struct {
		name string
		md   chroma.Metadata
		tol  float64
	}{
		{"sq8-cosine", sq8Meta("cosine"), 2e-3},
		{"float32-l2", chroma.Metadata{"hnsw:space": where.String("l2")}, 1e-4},
	}
	if racedetector.Enabled { // the readers are the same for both codes; both are checked without -race
		cases = cases[:1]
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := rand.New(rand.NewPCG(7, 7))
			vecs := clusteredVecs(r, n, 32)
			w, err := vecstore.Open(ctx, dir, vecstore.Options{SnapshotMinOps: 1 << 30, SnapshotRatio: 10})
			if err != nil {
				t.Fatal(err)
			}
			c := mustCreate(t, w, chroma.CreateCollectionRequest{Name: "coll", Metadata: tc.md})
			add := func(from, to int) {
				req := chroma.AddRequest{}
				for i := from; i < to; i++ {
					req.IDs = append(req.IDs, fmt.Sprintf("id%d", i))
					req.Embeddings = append(req.Embeddings, vecs[i])
					doc := fmt.Sprintf("doc %d", i)
					req.Documents = append(req.Documents, &doc)
					req.Metadatas = append(req.Metadatas, chroma.Metadata{"i": where.Int(int64(i))})
				}
				if err := w.Upsert(ctx, c.ID, req); err != nil {
					t.Fatal(err)
				}
			}
			add(0, n-300)
			if err := w.Checkpoint(ctx, c.ID); err != nil {
				t.Fatal(err)
			}
			queries := clusteredVecs(rand.New(rand.NewPCG(8, 8)), 20, 32)
			current := map[string][]float32{}
			for i, v := range vecs[:n-300] {
				current[fmt.Sprintf("id%d", i)] = v
			}
			// compare checks the one-shot store against a loaded one: the
			// same answers where both search the snapshot's graph; with
			// records written since, which the one-shot store compares
			// exactly and the loaded one inserted in its graph, recall
			// against the exact answer as good as the loaded store's.
			compare := func(stage string, sinceSnapshot bool) {
				t.Helper()
				one := openOneShot(t, dir)
				loaded := openStore(t, dir)
				var rOne, rLoaded float64
				for qi, q := range queries {
					a, b := queryAll(t, one, c.ID, q, 10), queryAll(t, loaded, c.ID, q, 10)
					if !sinceSnapshot {
						sameAnswer(t, fmt.Sprintf("%s, query %d", stage, qi), a, b, tc.tol)
						continue
					}
					want := exactCurrent(current, q, 10, tc.name == "sq8-cosine")
					rOne += recallOf(a.IDs[0], want)
					rLoaded += recallOf(b.IDs[0], want)
				}
				// (SQ8 near-ties: the stored codes against the loaded graph's
				// re-derived ones can swap the tenth neighbour.)
				if nq := float64(len(queries)); rOne/nq < rLoaded/nq-0.02 || (sinceSnapshot && rOne/nq < 0.95) {
					t.Errorf("%s: recall in place %.3f, loaded %.3f", stage, rOne/float64(len(queries)), rLoaded/float64(len(queries)))
				}
				ids := []string{"id5", "id1", "nope", "id" + fmt.Sprint(n-1), "id3"}
				inc := []chroma.Include{chroma.IncludeEmbeddings, chroma.IncludeDocuments, chroma.IncludeMetadatas}
				g1, err := one.Get(ctx, c.ID, chroma.GetRequest{IDs: ids, Include: inc})
				if err != nil {
					t.Fatal(err)
				}
				g2, err := loaded.Get(ctx, c.ID, chroma.GetRequest{IDs: ids, Include: inc})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(g1.IDs, g2.IDs) {
					t.Fatalf("%s: get ids %v, want %v", stage, g1.IDs, g2.IDs)
				}
				for i := range g2.IDs {
					for j := range g2.Embeddings[i] {
						if math.Abs(float64(g1.Embeddings[i][j]-g2.Embeddings[i][j])) > 10*tc.tol*(1+math.Abs(float64(g2.Embeddings[i][j]))) {
							t.Fatalf("%s: get %s embedding differs", stage, g2.IDs[i])
						}
					}
				}
				if st := one.Stats(); st.Collections != 0 || st.InPlaceReads != uint64(len(queries)+1) {
					t.Errorf("%s: one-shot store stats %+v: want no collection loaded and every read in place", stage, st)
				}
			}
			compare("after the snapshot", false)

			// Written since the snapshot: new records, records moved
			// elsewhere, deleted ones (the ids nearest to the queries
			// among them).
			add(n-300, n)
			moved := chroma.UpdateRequest{}
			for i := 0; i < 200; i++ {
				moved.IDs = append(moved.IDs, fmt.Sprintf("id%d", i))
				v := append([]float32(nil), queries[i%len(queries)]...)
				v[i%len(v)] += 0.05 * float32(1+i/len(queries))
				moved.Embeddings = append(moved.Embeddings, v)
			}
			if err := w.Update(ctx, c.ID, moved); err != nil {
				t.Fatal(err)
			}
			var del []string
			for _, q := range queries[:5] {
				del = append(del, queryIDs(t, w, c.ID, q, 3, nil)...)
			}
			if err := w.Delete(ctx, c.ID, chroma.DeleteRequest{IDs: del}); err != nil {
				t.Fatal(err)
			}
			for i := n - 300; i < n; i++ {
				current[fmt.Sprintf("id%d", i)] = vecs[i]
			}
			for i, id := range moved.IDs {
				current[id] = moved.Embeddings[i]
			}
			for _, id := range del {
				delete(current, id)
			}
			compare("after writes since the snapshot", true)
			for _, q := range queries[:5] {
				for _, id := range queryIDs(t, openOneShot(t, dir), c.ID, q, 10, nil) {
					if slices.Contains(del, id) {
						t.Errorf("deleted %s returned", id)
					}
				}
			}
			if err := w.Close(); err != nil { // snapshots: the log is trimmed
				t.Fatal(err)
			}
			compare("after the closing snapshot", false)
		})
	}
}

// TestOneShotOlderSnapshot: a one-shot store reads a format-2 file (its
// snapshots compressed) by loading the collection as before, and leaves the
// file as it was; an ordinary store that writes rewrites the snapshots raw
// at Close.
func TestOneShotOlderSnapshot(t *testing.T) {
	ctx := context.Background()
	b, err := os.ReadFile("testdata/format-v2.db")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "vectors.db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	read := func(s *vecstore.Store) {
		t.Helper()
		for _, code := range []string{"float32", "sq8"} {
			c, err := s.GetCollection(ctx, chroma.DefaultTenant, chroma.DefaultDatabase, "fixture-"+code)
			if err != nil {
				t.Fatal(err)
			}
			if got := queryIDs(t, s, c.ID, []float32{1, 0.1, 0.4}, 3, nil); !slices.Equal(got, []string{"a", "c", "b"}) {
				t.Errorf("%s: query %v", code, got)
			}
		}
	}
	// The first open writes the sequence hint (and bbolt's meta page).
	first, err := vecstore.Open(ctx, dir, vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	one := openOneShot(t, dir)
	read(one)
	if err := one.Close(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); !slices.Equal(after, b) {
		t.Fatal("a one-shot store's reads changed the file")
	}
	s, err := vecstore.Open(ctx, dir, vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	read(s)
	for _, code := range []string{"float32", "sq8"} {
		c, err := s.GetCollection(ctx, chroma.DefaultTenant, chroma.DefaultDatabase, "fixture-"+code)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Add(ctx, c.ID, chroma.AddRequest{IDs: []string{"z"}, Embeddings: [][]float32{{-5, -5, -5}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if v, _ := fileVersion(t, dir); v != 3 {
		t.Errorf("version %d after an ordinary store's Close, want 3", v)
	}
	read(openOneShot(t, dir))
	read(openStore(t, dir))
}

// TestLoadInBackground: a store that loads in the background answers the
// first query in place while the collection loads, then from memory, the
// same answer both times; writes work after.
func TestLoadInBackground(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(9, 9))
	w := openStore(t, dir)
	c := mustCreate(t, w, chroma.CreateCollectionRequest{Name: "coll", Metadata: sq8Meta("cosine")})
	vecs := clusteredVecs(r, 2500, 32)
	addVecs(t, w, c.ID, vecs)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := vecstore.Open(ctx, dir, vecstore.Options{LoadInBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	q := vecs[17]
	first := queryAll(t, s, c.ID, q, 10)
	if st := s.Stats(); st.InPlaceReads != 1 {
		t.Fatalf("first query not in place: %+v", st)
	}
	if _, err := s.Count(ctx, c.ID); err != nil { // waits for the load
		t.Fatal(err)
	}
	second := queryAll(t, s, c.ID, q, 10)
	if st := s.Stats(); st.Collections != 1 || st.InPlaceReads != 1 {
		t.Fatalf("after the load: %+v", st)
	}
	sameAnswer(t, "in place, then loaded", first, second, 2e-3)
	findsThemselves(t, s, c.ID, vecs, 0, len(vecs), "after the load")
	if err := s.Delete(ctx, c.ID, chroma.DeleteRequest{IDs: []string{"id17"}}); err != nil {
		t.Fatal(err)
	}
	if got := queryIDs(t, s, c.ID, q, 1, nil); got[0] == "id17" {
		t.Error("deleted record returned")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// exactCurrent is the exact top k of q among the records in current.
func exactCurrent(current map[string][]float32, q []float32, k int, cosine bool) []string {
	ids := make([]string, 0, len(current))
	vs := make([][]float32, 0, len(current))
	for id, v := range current {
		ids = append(ids, id)
		vs = append(vs, v)
	}
	top := exactTop(vs, q, k, cosine) // names "id<index into vs>"
	out := make([]string, len(top))
	for i, name := range top {
		var j int
		fmt.Sscanf(name, "id%d", &j)
		out[i] = ids[j]
	}
	return out
}

// TestOneShotDamagedVectors: a vector whose checksum fails is reported as
// corruption by a read in place, never a panic or a silent wrong answer.
func TestOneShotDamagedVectors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := vecstore.Open(ctx, dir, vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := mustCreate(t, w, chroma.CreateCollectionRequest{Name: "coll", Metadata: sq8Meta("cosine")})
	vecs := clusteredVecs(rand.New(rand.NewPCG(3, 3)), 2500, 16)
	addVecs(t, w, c.ID, vecs)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(filepath.Join(dir, "vectors.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("c:" + c.ID)).Bucket([]byte("vec"))
		damaged := map[string][]byte{}
		if err := b.ForEach(func(k, v []byte) error {
			d := slices.Clone(v)
			d[len(d)-1] ^= 1
			damaged[string(k)] = d
			return nil
		}); err != nil {
			return err
		}
		for k, v := range damaged {
			if err := b.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	one := openOneShot(t, dir)
	k := 5
	_, err = one.Query(ctx, c.ID, chroma.QueryRequest{Embeddings: [][]float32{vecs[0]}, NResults: &k})
	if !errors.Is(err, chroma.ErrCorrupt) {
		t.Fatalf("query over damaged vectors: %v", err)
	}
	_, err = one.Get(ctx, c.ID, chroma.GetRequest{IDs: []string{"id1"}, Include: []chroma.Include{chroma.IncludeEmbeddings}})
	if !errors.Is(err, chroma.ErrCorrupt) {
		t.Fatalf("get of a damaged vector: %v", err)
	}
}

// TestOneShotFilteredInPlace: a one-shot store answers queries with a
// where filter from the file without loading the collection (the allowed
// set read from the records' metadata, then the loaded path's plan: an
// exact scan of a small set, the graph walk for a large one), and its
// answers are the loaded store's after a snapshot, and as good against
// the exact filtered answer after adds, metadata updates and deletes
// written since, for SQ8 and sq8r collections (whose centroid tables a
// one-shot store decodes once for all its reads).
func TestOneShotFilteredInPlace(t *testing.T) {
	for _, code := range []string{"sq8", "sq8r"} {
		t.Run(code, func(t *testing.T) { testOneShotFiltered(t, code) })
	}
}

func testOneShotFiltered(t *testing.T, code string) {
	ctx := context.Background()
	const n, dim, tol = 6000, 16, 2e-3
	dir := t.TempDir()
	// DelegateFiltered leaves the plan to index at this size, so that
	// large allowed sets are walked in the graph, as at 100,000 records.
	opts := vecstore.Options{SnapshotMinOps: 1 << 30, SnapshotRatio: 10, DelegateFiltered: true}
	w, err := vecstore.Open(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	md := chroma.Metadata{chroma.MetaVectorCode: where.String(code), "hnsw:space": where.String("cosine")}
	c := mustCreate(t, w, chroma.CreateCollectionRequest{Name: "coll", Metadata: md})
	vecs := clusteredVecs(rand.New(rand.NewPCG(9, 9)), n+300, dim)
	current := map[string][]float32{}
	meta := map[string]chroma.Metadata{}
	upsert := func(from, to int, group func(i int) string) {
		req := chroma.AddRequest{}
		for i := from; i < to; i++ {
			id := fmt.Sprintf("id%d", i)
			md := chroma.Metadata{"i": where.Int(int64(i)), "g": where.String(group(i))}
			if i%7 == 0 {
				md["odd"] = where.Bool(true)
			}
			req.IDs = append(req.IDs, id)
			req.Embeddings = append(req.Embeddings, vecs[i])
			req.Metadatas = append(req.Metadatas, md)
			current[id], meta[id] = vecs[i], md
		}
		if err := w.Upsert(ctx, c.ID, req); err != nil {
			t.Fatal(err)
		}
	}
	quarters := func(i int) string { return []string{"a", "a", "a", "b"}[i%4] }
	upsert(0, n, quarters)
	if err := w.Checkpoint(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	filters := map[string]*where.Expr{
		"three quarters (walked)": where.Eq("g", where.String("a")),
		"a quarter (scanned)":     where.Eq("g", where.String("b")),
		"or (walked)":             where.Or(where.Eq("g", where.String("b")), where.Gte("i", where.Int(1000))),
		"and, in, missing key":    where.And(where.In("g", where.String("a"), where.String("b")), where.Eq("odd", where.Bool(true))),
		"ne, lt":                  where.And(where.Ne("g", where.String("b")), where.Lt("i", where.Int(2500))),
		"nothing":                 where.Eq("g", where.String("z")),
	}
	queries := clusteredVecs(rand.New(rand.NewPCG(10, 10)), 10, dim)
	query := func(s *vecstore.Store, q []float32, f *where.Expr) *chroma.QueryResult {
		t.Helper()
		k := 10
		res, err := s.Query(ctx, c.ID, chroma.QueryRequest{Embeddings: [][]float32{q}, NResults: &k, Where: f,
			Include: []chroma.Include{chroma.IncludeDistances, chroma.IncludeDocuments, chroma.IncludeMetadatas, chroma.IncludeEmbeddings}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	compare := func(stage string, sinceSnapshot bool) {
		t.Helper()
		one, err := vecstore.Open(ctx, dir, vecstore.Options{OneShot: true, DelegateFiltered: true})
		if err != nil {
			t.Fatal(err)
		}
		defer one.Close()
		loaded, err := vecstore.Open(ctx, dir, vecstore.Options{DelegateFiltered: true})
		if err != nil {
			t.Fatal(err)
		}
		defer loaded.Close()
		for name, f := range filters {
			var rOne, rLoaded float64
			for qi, q := range queries {
				a, b := query(one, q, f), query(loaded, q, f)
				for _, id := range a.IDs[0] {
					if !matches(f, meta[id]) {
						t.Fatalf("%s, %s: %s does not pass the filter", stage, name, id)
					}
				}
				if !sinceSnapshot {
					sameAnswer(t, fmt.Sprintf("%s, %s, query %d", stage, name, qi), a, b, tol)
					continue
				}
				passing := map[string][]float32{}
				for id, v := range current {
					if matches(f, meta[id]) {
						passing[id] = v
					}
				}
				if len(passing) == 0 {
					if len(a.IDs[0]) != 0 {
						t.Fatalf("%s, %s: %d hits, want none", stage, name, len(a.IDs[0]))
					}
					continue
				}
				want := exactCurrent(passing, q, 10, true)
				rOne += recallOf(a.IDs[0], want)
				rLoaded += recallOf(b.IDs[0], want)
			}
			if nq := float64(len(queries)); rOne/nq < rLoaded/nq-0.02 {
				t.Errorf("%s, %s: recall in place %.3f, loaded %.3f", stage, name, rOne/nq, rLoaded/nq)
			}
		}
		if st := one.Stats(); st.Collections != 0 || st.InPlaceReads != uint64(len(filters)*len(queries)) {
			t.Errorf("%s: one-shot store stats %+v: want no collection loaded and every query in place", stage, st)
		}
	}
	compare("after the snapshot", false)

	// Written since the snapshot: new records, records moved to another
	// group, deleted ones.
	upsert(n, n+300, quarters)
	upsert(0, 400, func(i int) string { return []string{"b", "a"}[i%2] })
	var del []string
	for _, q := range queries[:5] {
		del = append(del, queryIDs(t, w, c.ID, q, 3, where.Eq("g", where.String("b")))...)
	}
	if err := w.Delete(ctx, c.ID, chroma.DeleteRequest{IDs: del}); err != nil {
		t.Fatal(err)
	}
	for _, id := range del {
		delete(current, id)
	}
	compare("after writes since the snapshot", true)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// matches is the test's own reading of the filters the in-place tests use.
func matches(f *where.Expr, md chroma.Metadata) bool {
	switch f.Op {
	case where.OpAnd:
		for _, c := range f.Children {
			if !matches(c, md) {
				return false
			}
		}
		return true
	case where.OpOr:
		for _, c := range f.Children {
			if matches(c, md) {
				return true
			}
		}
		return false
	}
	v, ok := md[f.Key]
	switch f.Op {
	case where.OpEq:
		return ok && v == f.Value
	case where.OpNe:
		return !ok || v != f.Value
	case where.OpIn:
		return ok && slices.Contains(f.Values, v)
	case where.OpNin:
		return !ok || !slices.Contains(f.Values, v)
	case where.OpGte:
		return ok && v.Int >= f.Value.Int
	case where.OpLt:
		return ok && v.Int < f.Value.Int
	}
	panic(fmt.Sprint("filter not read by the test: ", f.Op))
}
