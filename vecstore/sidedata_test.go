package vecstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
	bolt "go.etcd.io/bbolt"
)

// snapKeys lists the keys of collection coll's snap bucket in the store
// at dir, and with strip deletes the given ones first (what a snapshot
// written before they existed looks like).
func snapKeys(t *testing.T, dir, coll string, strip ...string) []string {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, "vectors.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var keys []string
	err = db.Update(func(tx *bolt.Tx) error {
		sb := tx.Bucket([]byte("c:" + coll)).Bucket([]byte("snap"))
		for _, k := range strip {
			if err := sb.Delete([]byte(k)); err != nil {
				return err
			}
		}
		return sb.ForEach(func(k, _ []byte) error {
			keys = append(keys, string(k))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func copyStore(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	for _, f := range []string{"vectors.db", "vectors.seq"} {
		b, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// TestOneShotSnapshotSideData: a snapshot stores, beside its graph, the
// metadata postings and (sq8r) each row's t, and a one-shot store reading
// in place with them gives exactly the answers it gives from a copy of the
// same file without them (where it scans every record's metadata and
// expands every row): the same allowed set (a query for every record that
// passes the filter) and the same graph walk (same ids, same distances,
// bit for bit), on 5,000 records, right after the snapshot and after adds,
// metadata changes, re-embeddings and deletes written since; the allowed
// sets are also the test's own reading of the filters. A Get after the
// queries (decoding rows with their view of the snapshot) equals a first
// read's.
func TestOneShotSnapshotSideData(t *testing.T) {
	for _, code := range []string{"sq8", "sq8r"} {
		t.Run(code, func(t *testing.T) { testSnapshotSideData(t, code) })
	}
}

func testSnapshotSideData(t *testing.T, code string) {
	ctx := context.Background()
	const n, dim = 5000, 16
	dir := t.TempDir()
	opts := vecstore.Options{SnapshotMinOps: 1 << 30, SnapshotRatio: 10, DelegateFiltered: true}
	w, err := vecstore.Open(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c := mustCreate(t, w, chroma.CreateCollectionRequest{Name: "coll", Metadata: chroma.Metadata{
		chroma.MetaVectorCode: where.String(code), "hnsw:space": where.String("cosine")}})
	r := rand.New(rand.NewPCG(21, 21))
	vecs := clusteredVecs(r, n+400, dim)
	meta := map[string]chroma.Metadata{}
	upsert := func(from, to int, vec func(i int) []float32, group func(i int) string) {
		t.Helper()
		req := chroma.AddRequest{}
		for i := from; i < to; i++ {
			id := fmt.Sprintf("id%d", i)
			md := chroma.Metadata{"i": where.Int(int64(i)), "g": where.String(group(i)), "p": where.String([]string{"x", "y", "z"}[i%3])}
			if i%5 == 0 {
				md["flag"] = where.Bool(i%10 == 0)
			}
			if i%11 == 0 {
				md["g"] = where.Int(int64(i)) // the same key with an int value
			}
			req.IDs = append(req.IDs, id)
			req.Embeddings = append(req.Embeddings, vec(i))
			req.Metadatas = append(req.Metadatas, md)
			meta[id] = md
		}
		if err := w.Upsert(ctx, c.ID, req); err != nil {
			t.Fatal(err)
		}
	}
	thirds := func(i int) string { return []string{"a", "b", "c"}[i%3] }
	upsert(0, n, func(i int) []float32 { return vecs[i] }, thirds)
	if err := w.Checkpoint(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	keys := snapKeys(t, dir, c.ID)
	want := []string{"\x00\x00\x00\x00", "ids", "meta"}
	if code == "sq8r" {
		want = append(want, "rowt")
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("snap bucket keys %q, want %q", keys, want)
	}
	filters := []*where.Expr{
		where.Eq("p", where.String("x")),
		where.Eq("g", where.String("b")),
		where.Ne("g", where.String("a")),
		where.In("g", where.String("a"), where.String("c")),
		where.Nin("p", where.String("y"), where.String("nothing")),
		where.Eq("flag", where.Bool(true)),
		where.Ne("flag", where.Bool(true)),
		where.And(where.Eq("p", where.String("z")), where.Or(where.Eq("g", where.String("a")), where.Eq("flag", where.Bool(false)))),
		where.Eq("missing", where.String("a")),
		where.And(where.Eq("p", where.String("x")), where.Gte("i", where.Int(2500))), // beyond the postings: scanned
	}
	queries := clusteredVecs(rand.New(rand.NewPCG(22, 22)), 6, dim)
	ask := func(s *vecstore.Store, q []float32, f *where.Expr, k int) *chroma.QueryResult {
		t.Helper()
		res, err := s.Query(ctx, c.ID, chroma.QueryRequest{Embeddings: [][]float32{q}, NResults: &k, Where: f,
			Include: []chroma.Include{chroma.IncludeDistances, chroma.IncludeMetadatas, chroma.IncludeEmbeddings}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	compare := func(stage string) {
		t.Helper()
		plain := copyStore(t, dir)
		snapKeys(t, plain, c.ID, "meta", "rowt")
		with, without := openOneShot(t, dir), openOneShot(t, plain)
		for fi, f := range filters {
			var passing []string
			for id, md := range meta {
				if matches(f, md) {
					passing = append(passing, id)
				}
			}
			slices.Sort(passing)
			all := ask(with, queries[0], f, n+400)
			got := slices.Clone(all.IDs[0])
			slices.Sort(got)
			if !slices.Equal(got, passing) {
				t.Fatalf("%s, filter %d: %d records allowed, want %d", stage, fi, len(got), len(passing))
			}
			if b := ask(without, queries[0], f, n+400); !reflect.DeepEqual(all, b) {
				t.Fatalf("%s, filter %d: every allowed record: answers differ", stage, fi)
			}
			for qi, q := range queries {
				a, b := ask(with, q, f, 10), ask(without, q, f, 10)
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("%s, filter %d, query %d: %v %v, without side data %v %v", stage, fi, qi, a.IDs, a.Distances, b.IDs, b.Distances)
				}
			}
		}
		// A Get after a query decodes rows with that query's view of
		// the snapshot; a store's first read opens the snapshot.
		ids := make([]string, 0, 40)
		for i := 0; i < n+400; i += (n + 400) / 40 {
			ids = append(ids, fmt.Sprintf("id%d", i))
		}
		get := func(s *vecstore.Store) *chroma.GetResult {
			t.Helper()
			res, err := s.Get(ctx, c.ID, chroma.GetRequest{IDs: ids, Include: []chroma.Include{chroma.IncludeEmbeddings, chroma.IncludeMetadatas}})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		if a, b := get(with), get(openOneShot(t, dir)); len(a.IDs) == 0 || !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: a Get after queries gives %d records, a first read %d, or they differ", stage, len(a.IDs), len(b.IDs))
		}
		// Queries and Gets at once (a search's vector side beside its
		// keyword side's similarities) answer what each answers alone:
		// the Get decodes with a row decoder of its own, never with the
		// view a query is searching (run under -race).
		k := 10
		qreq := chroma.QueryRequest{Embeddings: [][]float32{queries[1]}, NResults: &k, Include: []chroma.Include{chroma.IncludeDistances}}
		greq := chroma.GetRequest{IDs: ids, Include: []chroma.Include{chroma.IncludeEmbeddings}}
		wantQ, errQ := with.Query(ctx, c.ID, qreq)
		wantG, errG := with.Get(ctx, c.ID, greq)
		if errQ != nil || errG != nil {
			t.Fatal(errQ, errG)
		}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for range 5 {
					if w%2 == 0 {
						if got, err := with.Query(ctx, c.ID, qreq); err != nil || !reflect.DeepEqual(got, wantQ) {
							t.Errorf("%s: a query beside Gets: %v", stage, err)
							return
						}
					} else if got, err := with.Get(ctx, c.ID, greq); err != nil || !reflect.DeepEqual(got, wantG) {
						t.Errorf("%s: a Get beside queries: %v", stage, err)
						return
					}
				}
			})
		}
		wg.Wait()
		for _, s := range []*vecstore.Store{with, without} {
			if st := s.Stats(); st.Collections != 0 || st.InPlaceReads < uint64(len(filters)*(len(queries)+1)) {
				t.Fatalf("%s: stats %+v: want every query in place", stage, st)
			}
		}
	}
	compare("after the snapshot")

	// Written since: new records, records moved to another group,
	// re-embedded ones, deleted ones.
	upsert(n, n+400, func(i int) []float32 { return vecs[i] }, thirds)
	upsert(0, 300, func(i int) []float32 { return vecs[i] }, func(i int) string { return []string{"b", "c", "a"}[i%3] })
	upsert(300, 500, func(i int) []float32 { return vecs[n+400-1-i] }, thirds)
	var del []string
	for i := 500; i < 800; i += 2 {
		del = append(del, fmt.Sprintf("id%d", i))
		delete(meta, fmt.Sprintf("id%d", i))
	}
	if err := w.Delete(ctx, c.ID, chroma.DeleteRequest{IDs: del}); err != nil {
		t.Fatal(err)
	}
	compare("after writes since the snapshot")
}
