package pgcollections_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/internal/pgtest"
	"github.com/cairn-dev/cairn/internal/racedetector"
	"github.com/cairn-dev/cairn/pgcollections"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// TestFilteredHNSW: above ExactMax, queries go through the collection's
// HNSW index (its scan counter moves) and, with iterative scans, a filter
// passing 2% of the records still fills n_results, with recall@10 against
// the exact answer (a store scanning everything exactly) of at least 0.9.
func TestFilteredHNSW(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("builds a 3,000-record HNSW index: left to the run without -race")
	}
	ctx := context.Background()
	dsn := pgtest.Database(t)
	pg, err := pgcollections.Open(ctx, dsn, pgcollections.Options{ExactMax: 50})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	exact, err := pgcollections.Open(ctx, dsn, pgcollections.Options{ExactMax: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer exact.Close()
	if !pg.IterativeScans() {
		t.Skipf("pgvector %s has no iterative scans", pg.PgvectorVersion())
	}
	sp := chroma.SpaceCosine
	// A small ef_search makes a graph walk cheaper than a sort at this
	// size, so the planner takes the index (its estimate grows with
	// hnsw.ef_search); iterative scans must still fill n_results.
	ef := 10
	c, err := pg.CreateCollection(ctx, chroma.CreateCollectionRequest{Name: "scale", HNSW: &chroma.HNSWParams{Space: &sp, EfSearch: &ef}})
	if err != nil {
		t.Fatal(err)
	}
	const n, dim = 3000, 16
	rng := rand.New(rand.NewPCG(3, 4))
	vec := func() []float32 {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		return v
	}
	for start := 0; start < n; start += 1000 {
		var req chroma.AddRequest
		for i := start; i < start+1000; i++ {
			req.IDs = append(req.IDs, fmt.Sprint(i))
			req.Embeddings = append(req.Embeddings, vec())
			req.Metadatas = append(req.Metadatas, chroma.Metadata{"bucket": where.Int(int64(i % 50))})
		}
		if err := pg.Add(ctx, c.ID, req); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Statistics, as autovacuum keeps them in a running database: without
	// them the planner believes the fresh table small and sorts instead.
	if _, err := conn.Exec(ctx, `ANALYZE chroma_records`); err != nil {
		t.Fatal(err)
	}
	scans := func() int64 {
		var s int64
		if err := conn.QueryRow(ctx, `SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes WHERE indexrelname = $1`,
			"chroma_hnsw_"+strings.ReplaceAll(c.ID, "-", "")).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := scans()
	k := 10
	hits, total := 0, 0
	for q := 0; q < 10; q++ {
		// Ids only: narrow rows, for which the planner prefers the index
		// at this size (wide rows make a sort of the whole table cheaper).
		req := chroma.QueryRequest{Embeddings: [][]float32{vec()}, NResults: &k, Where: where.Eq("bucket", where.Int(7)),
			Include: []chroma.Include{}}
		got, err := pg.Query(ctx, c.ID, req)
		if err != nil {
			t.Fatal(err)
		}
		want, err := exact.Query(ctx, c.ID, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.IDs[0]) != k {
			t.Fatalf("query %d: %d results, want %d (a 2%% filter must still fill n_results)", q, len(got.IDs[0]), k)
		}
		for _, id := range got.IDs[0] {
			var i int
			if _, err := fmt.Sscan(id, &i); err != nil || i%50 != 7 {
				t.Fatalf("query %d: a result outside the filter: %s", q, id)
			}
		}
		for _, id := range want.IDs[0] {
			total++
			for _, g := range got.IDs[0] {
				if g == id {
					hits++
				}
			}
		}
	}
	// Backends report their statistics when they go idle or exit.
	pg.Close()
	exact.Close()
	deadline := time.Now().Add(2 * time.Minute) // generous: the machine may be loaded
	for scans() == before && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if scans() == before {
		t.Errorf("the HNSW index was not scanned")
	}
	if recall := float64(hits) / float64(total); recall < 0.9 {
		t.Errorf("filtered recall@10 = %.3f, want >= 0.9", recall)
	}
}

// TestSeveralProcesses: stores with their own pools (as separate
// processes) writing to one collection at once lose no write, create one
// collection for one name, and agree on what is stored.
func TestSeveralProcesses(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	const procs, batches, per = 3, 10, 20
	stores := make([]*pgcollections.Store, procs)
	for i := range stores {
		s, err := pgcollections.Open(ctx, dsn, pgcollections.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	ids := make([]string, procs)
	var wg sync.WaitGroup
	errs := make(chan error, procs*batches*2)
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := s.CreateCollection(ctx, chroma.CreateCollectionRequest{Name: "shared", GetOrCreate: true})
			if err != nil {
				errs <- err
				return
			}
			ids[i] = c.ID
			for b := 0; b < batches; b++ {
				var req chroma.AddRequest
				for r := 0; r < per; r++ {
					req.IDs = append(req.IDs, fmt.Sprintf("p%d-b%d-r%d", i, b, r), fmt.Sprintf("common-%d", r))
					req.Embeddings = append(req.Embeddings, []float32{float32(i), float32(b), float32(r)}, []float32{1, 1, 1})
					req.Metadatas = append(req.Metadatas, chroma.Metadata{"p": where.Int(int64(i))},
						chroma.Metadata{"hits": where.Int(int64(b))})
				}
				if err := s.Upsert(ctx, c.ID, req); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, id := range ids[1:] {
		if id != ids[0] {
			t.Fatalf("get-or-create from several stores made several collections: %v", ids)
		}
	}
	n, err := stores[0].Count(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := procs*batches*per + per; n != want {
		t.Errorf("count = %d, want %d (no lost and no duplicate records)", n, want)
	}
	cs, err := stores[1].ListCollections(ctx, chroma.DefaultTenant, chroma.DefaultDatabase, nil, 0)
	if err != nil || len(cs) != 1 {
		t.Errorf("collections: %d (%v), want 1", len(cs), err)
	}
}

// TestMigrations: opening again is a no-op, and a database migrated by a
// newer cairn is refused with ErrIncompatibleFormat.
func TestMigrations(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	for range 2 {
		s, err := pgcollections.Open(ctx, dsn, pgcollections.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetDatabase(ctx, chroma.DefaultTenant, chroma.DefaultDatabase); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO cairn_chroma_schema (version) VALUES ($1)`, pgcollections.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	_, err = pgcollections.Open(ctx, dsn, pgcollections.Options{})
	if !errors.Is(err, chroma.ErrIncompatibleFormat) {
		t.Fatalf("opening a newer schema: %v, want ErrIncompatibleFormat", err)
	}
}
