package vecstore_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
	bolt "go.etcd.io/bbolt"
)

func mustCreate(t testing.TB, s *vecstore.Store, req chroma.CreateCollectionRequest) chroma.Collection {
	t.Helper()
	c, err := s.CreateCollection(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func addRandom(t testing.TB, s *vecstore.Store, coll string, r *rand.Rand, from, n, dim int) [][]float32 {
	t.Helper()
	var vecs [][]float32
	for b := from; b < from+n; b += 1000 {
		req := chroma.AddRequest{}
		for i := b; i < min(b+1000, from+n); i++ {
			v := randVec(r, dim)
			vecs = append(vecs, v)
			req.IDs = append(req.IDs, fmt.Sprintf("id%d", i))
			req.Embeddings = append(req.Embeddings, v)
			req.Metadatas = append(req.Metadatas, chroma.Metadata{"i": where.Int(int64(i)), "r": where.Int(int64(i * 7919 % 1000))})
		}
		if err := s.Add(context.Background(), coll, req); err != nil {
			t.Fatal(err)
		}
	}
	return vecs
}

func queryIDs(t testing.TB, s *vecstore.Store, coll string, q []float32, k int, w *where.Expr) []string {
	t.Helper()
	res, err := s.Query(context.Background(), coll, chroma.QueryRequest{Embeddings: [][]float32{q}, NResults: &k, Where: w,
		Include: []chroma.Include{chroma.IncludeDistances}})
	if err != nil {
		t.Fatal(err)
	}
	return res.IDs[0]
}

func TestErrorClassesAndModel(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	c := mustCreate(t, s, chroma.CreateCollectionRequest{Name: "model", Model: "m1", Dimension: 3})
	add := func(model string, v []float32) error {
		return s.Add(ctx, c.ID, chroma.AddRequest{IDs: []string{"x"}, Embeddings: [][]float32{v}, Model: model})
	}
	if err := add("m2", []float32{1, 2, 3}); !errors.Is(err, chroma.ErrEmbedderMismatch) {
		t.Errorf("other model: got %v", err)
	}
	if err := add("", []float32{1, 2, 3}); !errors.Is(err, chroma.ErrEmbedderMismatch) {
		t.Errorf("no model: got %v", err)
	}
	if err := add("m1", []float32{1, 2}); !errors.Is(err, chroma.ErrDimensionMismatch) {
		t.Errorf("wrong dim: got %v", err)
	}
	if err := add("m1", []float32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Query(ctx, c.ID, chroma.QueryRequest{Embeddings: [][]float32{{1, 2, 3}}, Model: "m2"})
	if !errors.Is(err, chroma.ErrEmbedderMismatch) {
		t.Errorf("query other model: got %v", err)
	}
	if _, err := s.Query(ctx, c.ID, chroma.QueryRequest{Embeddings: [][]float32{{1, 2, 3}}, Model: "m1"}); err != nil {
		t.Error(err)
	}
	if _, err := s.Count(ctx, "not-a-uuid"); !errors.Is(err, chroma.ErrInvalid) {
		t.Errorf("bad uuid: %v", err)
	}
	if _, err := s.Count(ctx, "00000000-0000-4000-8000-000000000000"); !errors.Is(err, chroma.ErrNotFound) {
		t.Errorf("unknown uuid: %v", err)
	}
	var e *chroma.Error
	if _, err := s.CreateCollection(ctx, chroma.CreateCollectionRequest{Name: "model"}); !errors.As(err, &e) ||
		e.Class != chroma.ErrExists || e.Rule != chroma.RuleTaken || e.Field != "collection" || e.Value != "model" {
		t.Errorf("exists: %v", err)
	}
}

// TestTwoStoresShareDir: two Stores on one directory see each other's
// writes at once, including collection changes, deletes and the reload
// after a snapshot trimmed the log.
func TestTwoStoresShareDir(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := openStore(t, dir)
	b, err := vecstore.Open(ctx, dir, vecstore.Options{SnapshotMinOps: 50, SnapshotRatio: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	r := rand.New(rand.NewPCG(1, 2))
	c := mustCreate(t, a, chroma.CreateCollectionRequest{Name: "shared"})
	addRandom(t, a, c.ID, r, 0, 100, 8)
	if n, _ := b.Count(ctx, c.ID); n != 100 {
		t.Fatalf("b sees %d records, want 100", n)
	}
	// b writes enough to snapshot and trim the log; a must reload.
	addRandom(t, b, c.ID, r, 100, 300, 8)
	if err := b.Delete(ctx, c.ID, chroma.DeleteRequest{Where: where.Lt("i", where.Int(50))}); err != nil {
		t.Fatal(err)
	}
	if n, _ := a.Count(ctx, c.ID); n != 350 {
		t.Fatalf("a sees %d records, want 350", n)
	}
	q := randVec(r, 8)
	if ga, gb := queryIDs(t, a, c.ID, q, 10, nil), queryIDs(t, b, c.ID, q, 10, nil); !slices.Equal(ga, gb) {
		t.Errorf("query differs: a %v b %v", ga, gb)
	}
	// Reuse of freed dense ids across processes.
	addRandom(t, a, c.ID, r, 1000, 30, 8)
	if n, _ := b.Count(ctx, c.ID); n != 380 {
		t.Fatalf("b sees %d, want 380", n)
	}
	if err := a.ModifyCollection(ctx, c.ID, chroma.ModifyCollectionRequest{NewName: ptrStr("renamed")}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetCollection(ctx, chroma.DefaultTenant, chroma.DefaultDatabase, "renamed"); err != nil {
		t.Fatal(err)
	}
	if err := b.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteCollection(ctx, chroma.DefaultTenant, chroma.DefaultDatabase, "renamed"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Count(ctx, c.ID); !errors.Is(err, chroma.ErrNotFound) {
		t.Fatalf("deleted collection: %v", err)
	}
}

func ptrStr(s string) *string { return &s }

// TestReopenWithoutClose: a Store abandoned without Close (as after a crash)
// leaves a snapshot plus a log tail; reopening answers identically.
func TestReopenWithoutClose(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s1, err := vecstore.Open(ctx, dir, vecstore.Options{SnapshotMinOps: 500, SnapshotRatio: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	c := mustCreate(t, s1, chroma.CreateCollectionRequest{Name: "reopen", HNSW: &chroma.HNSWParams{Space: ptrSpace(chroma.SpaceCosine)}})
	addRandom(t, s1, c.ID, r, 0, 2500, 16)
	_ = s1.Delete(ctx, c.ID, chroma.DeleteRequest{IDs: []string{"id1", "id2", "id2400"}})
	st := s1.Stats()
	if st.Snapshots == 0 {
		t.Errorf("no snapshot written: %+v", st)
	}
	qs := [][]float32{randVec(r, 16), randVec(r, 16)}
	var before [][]string
	for _, q := range qs {
		before = append(before, queryIDs(t, s1, c.ID, q, 10, where.Gte("r", where.Int(100))))
	}
	// No Close: the file must be complete as it is.
	s2 := openStore(t, dir)
	for i, q := range qs {
		if got := queryIDs(t, s2, c.ID, q, 10, where.Gte("r", where.Int(100))); !slices.Equal(got, before[i]) {
			t.Errorf("query %d after reopen: %v, before %v", i, got, before[i])
		}
	}
	if n, _ := s2.Count(ctx, c.ID); n != 2497 {
		t.Errorf("count %d", n)
	}
	got, err := s2.Get(ctx, c.ID, chroma.GetRequest{IDs: []string{"id5"}, Include: []chroma.Include{chroma.IncludeEmbeddings}})
	if err != nil || len(got.Embeddings) != 1 {
		t.Fatal(err)
	}
	_ = s1.Close()
}

func ptrSpace(s chroma.Space) *chroma.Space { return &s }

func TestNewerFormatRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	_ = s.Close()
	db, err := bolt.Open(filepath.Join(dir, "vectors.db"), 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte("version"), []byte{0, 0, 0, 7}) })
	db.Close()
	_, err = vecstore.Open(ctx, dir, vecstore.Options{})
	if !errors.Is(err, chroma.ErrIncompatibleFormat) || !strings.Contains(err.Error(), "version 7") {
		t.Fatalf("got %v, want ErrIncompatibleFormat naming version 7", err)
	}
}

// TestCorruptionAndRepair damages a record, a vector and the graph snapshot:
// opening reports ErrCorrupt (never a panic or a wrong answer), Repair
// drops what is damaged and rebuilds the graph from the stored vectors.
func TestCorruptionAndRepair(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := vecstore.Open(ctx, dir, vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	c := mustCreate(t, s, chroma.CreateCollectionRequest{Name: "damaged"})
	addRandom(t, s, c.ID, r, 0, 3000, 8)
	if err := s.Checkpoint(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	damage := func(fn func(cb *bolt.Bucket) error) {
		t.Helper()
		db, err := bolt.Open(filepath.Join(dir, "vectors.db"), 0o644, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Update(func(tx *bolt.Tx) error { return fn(tx.Bucket([]byte("c:" + c.ID))) }); err != nil {
			t.Fatal(err)
		}
	}
	flip := func(b *bolt.Bucket, key []byte) error {
		v := append([]byte(nil), b.Get(key)...)
		v[len(v)/2] ^= 0x40
		return b.Put(key, v)
	}
	damage(func(cb *bolt.Bucket) error {
		if err := flip(cb.Bucket([]byte("rec")), []byte("id7")); err != nil {
			return err
		}
		return flip(cb.Bucket([]byte("snap")), []byte{0, 0, 0, 0})
	})
	s2, err := vecstore.Open(ctx, dir, vecstore.Options{})
	if err != nil {
		t.Fatal(err) // collections load lazily: the error shows on first use
	}
	_, err = s2.Count(ctx, c.ID)
	if !errors.Is(err, chroma.ErrCorrupt) {
		t.Fatalf("damaged collection: got %v, want ErrCorrupt", err)
	}
	_ = s2.Close()
	rep, err := vecstore.Repair(ctx, dir, vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.DroppedRecords != 1 || rep.GraphsRebuilt != 1 || rep.Records != 2999 {
		t.Errorf("repair report %+v", rep)
	}
	s3 := openStore(t, dir)
	if n, err := s3.Count(ctx, c.ID); err != nil || n != 2999 {
		t.Fatalf("after repair: %d %v", n, err)
	}
	if got := queryIDs(t, s3, c.ID, randVec(r, 8), 5, nil); len(got) != 5 {
		t.Fatalf("query after repair: %v", got)
	}
	_ = s3.Close()

	// A damaged vector is found by Repair too.
	damage(func(cb *bolt.Bucket) error { return flip(cb.Bucket([]byte("vec")), []byte{0, 0, 0, 9}) })
	rep, err = vecstore.Repair(ctx, dir, vecstore.Options{})
	if err != nil || rep.DroppedRecords != 1 {
		t.Fatalf("repair: %+v %v", rep, err)
	}
}

// TestGarbageFiles: files that are not stores, or are truncated or have
// random bytes flipped, give errors and never panic.
func TestGarbageFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "vectors.db"), []byte(strings.Repeat("garbage!", 2000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := vecstore.Open(ctx, dir, vecstore.Options{}); !errors.Is(err, chroma.ErrCorrupt) {
		t.Errorf("garbage file: %v", err)
	}
	// Random page damage.
	src := t.TempDir()
	s, err := vecstore.Open(ctx, src, vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	c := mustCreate(t, s, chroma.CreateCollectionRequest{Name: "pages"})
	addRandom(t, s, c.ID, r, 0, 2000, 8)
	_ = s.Close()
	orig, err := os.ReadFile(filepath.Join(src, "vectors.db"))
	if err != nil {
		t.Fatal(err)
	}
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	for i := 0; i < rounds; i++ {
		d := t.TempDir()
		b := slices.Clone(orig)
		for j := 0; j < 1+r.IntN(20); j++ {
			off := 2*4096 + r.IntN(len(b)-2*4096) // keep the meta pages
			b[off] ^= byte(1 + r.IntN(255))
		}
		if err := os.WriteFile(filepath.Join(d, "vectors.db"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panic on damaged file (round %d): %v", i, p)
				}
			}()
			s, err := vecstore.Open(ctx, d, vecstore.Options{})
			if err != nil {
				return
			}
			defer s.Close()
			_, _ = s.Count(ctx, c.ID)
			_, _ = s.Get(ctx, c.ID, chroma.GetRequest{Where: where.Gt("r", where.Int(500))})
			_, _ = s.Query(ctx, c.ID, chroma.QueryRequest{Embeddings: [][]float32{randVec(r, 8)}})
			// Check reads every page (on bbolt's own goroutine): it must
			// report the damage, never crash the process.
			_ = s.Check(ctx)
		}()
	}
}

// TestFrozenFixture opens testdata/format-v1.db, written by format version 1
// and never regenerated (unless -rewrite and the file is missing).
func TestFrozenFixture(t *testing.T) {
	ctx := context.Background()
	fixture := "testdata/format-v1.db"
	if _, err := os.Stat(fixture); os.IsNotExist(err) && *rewrite {
		dir := t.TempDir()
		s, err := vecstore.Open(ctx, dir, vecstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := mustCreate(t, s, chroma.CreateCollectionRequest{Name: "fixture", Metadata: chroma.Metadata{"k": where.Float(1)}})
		doc := "fixture document"
		if err := s.Add(ctx, c.ID, chroma.AddRequest{IDs: []string{"a", "b", "c"}, Embeddings: [][]float32{{1, 0}, {0, 1}, {1, 1}},
			Documents: []*string{&doc, nil, nil}, Metadatas: []chroma.Metadata{{"n": where.Int(1)}, {"n": where.Float(2)}, nil}}); err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		b, _ := os.ReadFile(filepath.Join(dir, "vectors.db"))
		if err := os.WriteFile(fixture, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := fixtureDir(t, fixture)
	s := openStore(t, dir)
	c, err := s.GetCollection(ctx, chroma.DefaultTenant, chroma.DefaultDatabase, "fixture")
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Get(ctx, c.ID, chroma.GetRequest{Where: where.Eq("n", where.Int(2)), Include: []chroma.Include{chroma.IncludeEmbeddings, chroma.IncludeMetadatas}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.IDs, []string{"b"}) || res.Metadatas[0]["n"].Kind != where.KindFloat || !slices.Equal(res.Embeddings[0], []float32{0, 1}) {
		t.Errorf("fixture get: %+v", res)
	}
	if got := queryIDs(t, s, c.ID, []float32{1, 0.1}, 1, nil); !slices.Equal(got, []string{"a"}) {
		t.Errorf("fixture query: %v", got)
	}
}

// TestFilteredRecall checks the planner against an exact filtered brute
// force: recall@10 >= 0.95 at every selectivity from 0.1% to 100%.
func TestFilteredRecall(t *testing.T) {
	n, dim, nq := 20000, 32, 30
	if testing.Short() {
		n, nq = 5000, 15
	}
	dir := t.TempDir()
	s := openStore(t, dir)
	r := rand.New(rand.NewPCG(11, 12))
	c := mustCreate(t, s, chroma.CreateCollectionRequest{Name: "recall"})
	vecs := addRandom(t, s, c.ID, r, 0, n, dim)
	// The same collection through a second store that hands every filter
	// to index.Search (exact scan or filtered walk by selectivity).
	s2, err := vecstore.Open(context.Background(), dir, vecstore.Options{DelegateFiltered: true, ExactMax: 1, ExactRatio: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s2.Close() })
	for _, st := range []struct {
		name string
		s    *vecstore.Store
	}{{"planner", s}, {"delegate", s2}} {
		for _, sel := range []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 1} {
			limit := int64(math.Round(sel * 1000))
			w := where.Lt("r", where.Int(limit))
			if sel == 1 {
				w = nil
			}
			var total float64
			for qi := 0; qi < nq; qi++ {
				q := randVec(r, dim)
				type cand struct {
					id string
					d  float64
				}
				var cands []cand
				for i, v := range vecs {
					if w != nil && int64(i*7919%1000) >= limit {
						continue
					}
					var d float64
					for j := range v {
						x := float64(v[j] - q[j])
						d += x * x
					}
					cands = append(cands, cand{fmt.Sprintf("id%d", i), d})
				}
				sort.Slice(cands, func(a, b int) bool { return cands[a].d < cands[b].d })
				want := map[string]bool{}
				for _, c := range cands[:min(10, len(cands))] {
					want[c.id] = true
				}
				got := queryIDs(t, st.s, c.ID, q, 10, w)
				hit := 0
				for _, id := range got {
					if want[id] {
						hit++
					}
				}
				total += float64(hit) / float64(len(want))
			}
			recall := total / float64(nq)
			t.Logf("%s: selectivity %.1f%%: recall@10 %.3f", st.name, sel*100, recall)
			if recall < 0.95 {
				t.Errorf("%s: selectivity %.1f%%: recall@10 %.3f < 0.95", st.name, sel*100, recall)
			}
		}
		t.Logf("%s: %+v", st.name, st.s.Stats())
	}
}

func TestCompactAndTenants(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	r := rand.New(rand.NewPCG(9, 10))
	c := mustCreate(t, s, chroma.CreateCollectionRequest{Name: "compact"})
	addRandom(t, s, c.ID, r, 0, 3000, 64)
	if err := s.Delete(ctx, c.ID, chroma.DeleteRequest{Where: where.Lt("i", where.Int(2500))}); err != nil {
		t.Fatal(err)
	}
	if err := s.Checkpoint(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(filepath.Join(dir, "vectors.db"))
	if err := s.Compact(ctx, true); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(filepath.Join(dir, "vectors.db"))
	t.Logf("compact: %d -> %d bytes", before.Size(), after.Size())
	if after.Size() > before.Size() {
		t.Errorf("compaction grew the file: %d -> %d", before.Size(), after.Size())
	}
	if n, err := s.Count(ctx, c.ID); err != nil || n != 500 {
		t.Fatalf("after compact: %d %v", n, err)
	}
	p, err := s.Peek(ctx, c.ID, 3)
	if err != nil || !slices.Equal(p.IDs, []string{"id2500", "id2501", "id2502"}) {
		t.Fatalf("peek: %v %v", p, err)
	}

	if err := s.CreateTenant(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTenant(ctx, "acme"); !errors.Is(err, chroma.ErrExists) {
		t.Errorf("duplicate tenant: %v", err)
	}
	if _, err := s.GetTenant(ctx, "nope"); !errors.Is(err, chroma.ErrNotFound) {
		t.Errorf("missing tenant: %v", err)
	}
	if err := s.CreateDatabase(ctx, "acme", "db1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateCollection(ctx, chroma.CreateCollectionRequest{Tenant: "acme", Database: "nodb", Name: "abc"}); !isNoDatabase(err, "nodb") {
		t.Errorf("missing database: %v", err)
	}
	mustCreate(t, s, chroma.CreateCollectionRequest{Tenant: "acme", Database: "db1", Name: "abc"})
	if n, _ := s.CountCollections(ctx, "acme", "db1"); n != 1 {
		t.Errorf("count collections %d", n)
	}
	dbs, err := s.ListDatabases(ctx, "acme", nil, 0)
	if err != nil || len(dbs) != 1 || dbs[0].Name != "db1" {
		t.Errorf("list databases %v %v", dbs, err)
	}
	if err := s.DeleteDatabase(ctx, "acme", "db1"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.CountCollections(ctx, "acme", "db1"); n != 0 {
		t.Errorf("collections survive their database: %d", n)
	}
	if err := s.Reset(ctx); !errors.Is(err, chroma.ErrForbidden) {
		t.Errorf("reset without AllowReset: %v", err)
	}
}

func isNoDatabase(err error, name string) bool {
	var e *chroma.Error
	return errors.As(err, &e) && errors.Is(err, chroma.ErrInvalid) && e.Rule == chroma.RuleNoDatabase && e.Value == name
}

// TestGetFewIDsInInsertionOrder holds Get by a few ids of a large
// collection (the records sorted by insertion order, not a walk over all of
// them) to the same answer as by many: insertion order, offset and limit,
// unknown and deleted ids left out.
func TestGetFewIDsInInsertionOrder(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	c := mustCreate(t, s, chroma.CreateCollectionRequest{Name: "few", Dimension: 2})
	var req chroma.AddRequest
	for i := range 200 {
		req.IDs = append(req.IDs, fmt.Sprintf("r%d", (i*37)%200))
		req.Embeddings = append(req.Embeddings, []float32{float32(i + 1), 1})
	}
	if err := s.Add(ctx, c.ID, req); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, c.ID, chroma.DeleteRequest{IDs: []string{"r74"}}); err != nil {
		t.Fatal(err)
	}
	// Added in the order r0, r37, r74, r111, r148, r185, r22, r59, r96, ...:
	// neither the order asked nor the ids' own order.
	ask := []string{"r96", "nope", "r59", "r22", "r185", "r74", "r37"}
	two := 2
	for _, tc := range []struct {
		offset int
		limit  *int
		want   []string
	}{
		{0, nil, []string{"r37", "r185", "r22", "r59", "r96"}},
		{1, &two, []string{"r185", "r22"}},
		{5, nil, nil},
	} {
		got, err := s.Get(ctx, c.ID, chroma.GetRequest{IDs: ask, Offset: tc.offset, Limit: tc.limit, Include: []chroma.Include{chroma.IncludeEmbeddings}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.IDs, tc.want) || len(got.Embeddings) != len(tc.want) {
			t.Errorf("offset %d limit %v: ids %v (%d embeddings), want %v", tc.offset, tc.limit, got.IDs, len(got.Embeddings), tc.want)
		}
	}
}

// TestResetKeeps: Reset deletes every tenant, database and collection but
// the databases Options.ResetKeeps names, whose collections and records
// stay, in this process, in another one sharing the file, and after a
// reopen.
func TestResetKeeps(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := vecstore.Options{AllowReset: true, ResetKeeps: []string{"kept"}}
	s, err := vecstore.Open(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other, err := vecstore.Open(ctx, dir, vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := s.CreateDatabase(ctx, chroma.DefaultTenant, "kept"); err != nil {
		t.Fatal(err)
	}
	kept := mustCreate(t, s, chroma.CreateCollectionRequest{Database: "kept", Name: "messages", Dimension: 2})
	if err := s.Add(ctx, kept.ID, chroma.AddRequest{IDs: []string{"a", "b"}, Embeddings: [][]float32{{1, 0}, {0, 1}}}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, chroma.CreateCollectionRequest{Name: "mine", Dimension: 2})
	if err := s.CreateTenant(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateDatabase(ctx, "acme", "kept"); err != nil { // same name, another tenant: not kept
		t.Fatal(err)
	}
	if err := s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	s2, err := vecstore.Open(ctx, dir, vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for name, st := range map[string]*vecstore.Store{"this process": s, "another process": other, "a reopen": s2} {
		if n, err := st.Count(ctx, kept.ID); err != nil || n != 2 {
			t.Errorf("%s: kept collection holds %d records (%v), want 2", name, n, err)
		}
		if cs, err := st.ListCollections(ctx, chroma.DefaultTenant, "kept", nil, 0); err != nil || len(cs) != 1 {
			t.Errorf("%s: kept database lists %v (%v)", name, cs, err)
		}
		if n, err := st.CountCollections(ctx, chroma.DefaultTenant, chroma.DefaultDatabase); err != nil || n != 0 {
			t.Errorf("%s: default_database holds %d collections after the reset (%v)", name, n, err)
		}
		if _, err := st.GetTenant(ctx, "acme"); !errors.Is(err, chroma.ErrNotFound) {
			t.Errorf("%s: tenant acme after the reset: %v", name, err)
		}
	}
	res, err := s2.Query(ctx, kept.ID, chroma.QueryRequest{Embeddings: [][]float32{{1, 0}}, NResults: ptrInt(1)})
	if err != nil || len(res.IDs) != 1 || len(res.IDs[0]) != 1 || res.IDs[0][0] != "a" {
		t.Errorf("query of the kept collection after a reopen: %v %v", res, err)
	}
}
