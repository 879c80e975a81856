package vecstore_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/index"
	"github.com/cairn-dev/cairn/internal/racedetector"
	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
	"github.com/klauspost/compress/zstd"
)

func sq8rMeta(space string) chroma.Metadata {
	return chroma.Metadata{chroma.MetaVectorCode: where.String("sq8r"), "hnsw:space": where.String(space)}
}

// nearlyEqual reports whether got is within a small relative error of want
// (a residual code's read-back: its error is below SQ8's step).
func nearlyEqual(got, want []float32) bool {
	if len(got) != len(want) {
		return false
	}
	var d, n float64
	for i := range got {
		d += float64(got[i]-want[i]) * float64(got[i]-want[i])
		n += float64(want[i]) * float64(want[i])
	}
	return d <= 1e-3*n
}

// embeddings returns every record's embedding by id.
func embeddings(t testing.TB, s *vecstore.Store, coll string) map[string][]float32 {
	t.Helper()
	res, err := s.Get(context.Background(), coll, chroma.GetRequest{Include: []chroma.Include{chroma.IncludeEmbeddings}})
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string][]float32, len(res.IDs))
	for i, id := range res.IDs {
		out[id] = res.Embeddings[i]
	}
	return out
}

// recallAt10 is the mean recall@10 of s's answers against the exact
// nearest of vecs (ids "id<i>") for queries vecs[0], vecs[step], ...
func recallAt10(t testing.TB, s *vecstore.Store, coll string, vecs [][]float32, cosine bool) float64 {
	t.Helper()
	hit, n := 0, 0
	for i := 0; i < len(vecs); i += len(vecs) / 50 {
		want := exactTop(vecs, vecs[i], 10, cosine)
		got := queryIDs(t, s, coll, vecs[i], 10, nil)
		for _, id := range got {
			if slices.Contains(want, id) {
				hit++
			}
		}
		n += 10
	}
	return float64(hit) / float64(n)
}

// TestSQ8R fills an sq8r collection across its training size from two
// stores on one directory (two processes' views): the write that crosses
// it trains the table in its transaction, the other store replays it
// (rows coded against a table it reads from the file), searches find the
// exact neighbours, embeddings read back near what was written, and a
// fresh store (loaded, and one-shot in place) answers the same after a
// snapshot and after writes since it. The file is marked version 4.
func TestSQ8R(t *testing.T) {
	spaces := []string{"cosine", "l2"}
	if racedetector.Enabled { // the concurrent stores' training is the same in both spaces
		spaces = spaces[:1]
	}
	for _, space := range spaces {
		t.Run(space, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			s1 := openStore(t, dir)
			s2 := openStore(t, dir)
			c := mustCreate(t, s1, chroma.CreateCollectionRequest{Name: "rrr", Metadata: sq8rMeta(space)})
			if c.Config.HNSW.VectorCode != chroma.CodeSQ8R {
				t.Fatalf("code %q", c.Config.HNSW.VectorCode)
			}
			n := index.TrainRows + 1500
			vecs := clusteredVecs(rand.New(rand.NewPCG(4, uint64(len(space)))), n, 32)
			addVecs(t, s1, c.ID, vecs[:3000]) // below the training size
			findsThemselves(t, s2, c.ID, vecs, 0, 3000, "before training")
			addVecs2 := func(s *vecstore.Store, from, to int) {
				req := chroma.AddRequest{}
				for i := from; i < to; i++ {
					req.IDs = append(req.IDs, fmt.Sprintf("id%d", i))
					req.Embeddings = append(req.Embeddings, vecs[i])
				}
				if err := s.Add(ctx, c.ID, req); err != nil {
					t.Fatal(err)
				}
			}
			addVecs2(s2, 3000, n-200) // crosses the training size
			addVecs2(s1, n-200, n)    // coded against the table s2 trained
			cosine := space == "cosine"
			for _, s := range []*vecstore.Store{s1, s2} {
				if r := recallAt10(t, s, c.ID, vecs, cosine); r < 0.95 {
					t.Errorf("recall@10 %.3f", r)
				}
				got := embeddings(t, s, c.ID)
				if len(got) != n {
					t.Fatalf("%d records", len(got))
				}
				for i, v := range vecs {
					if !nearlyEqual(got[fmt.Sprintf("id%d", i)], v) {
						t.Fatalf("id%d read back %v, wrote %v", i, got[fmt.Sprintf("id%d", i)][:4], v[:4])
					}
				}
			}
			before := embeddings(t, s1, c.ID)
			if err := s1.Checkpoint(ctx, c.ID); err != nil {
				t.Fatal(err)
			}
			// Writes after the snapshot: a replaced vector and a deletion.
			if err := s2.Upsert(ctx, c.ID, chroma.AddRequest{IDs: []string{"id5"}, Embeddings: [][]float32{vecs[9]}}); err != nil {
				t.Fatal(err)
			}
			if err := s2.Delete(ctx, c.ID, chroma.DeleteRequest{IDs: []string{"id6"}}); err != nil {
				t.Fatal(err)
			}
			delete(before, "id6")
			before["id5"] = embeddings(t, s2, c.ID)["id5"]
			for _, opts := range []vecstore.Options{{}, {OneShot: true}} {
				s3, err := vecstore.Open(ctx, dir, opts)
				if err != nil {
					t.Fatal(err)
				}
				// id5 now holds id9's vector and id6 is gone.
				findsThemselves(t, s3, c.ID, vecs, 0, n, fmt.Sprintf("one-shot %v", opts.OneShot), 5, 6, 9)
				if got := queryIDs(t, s3, c.ID, vecs[9], 2, nil); !slices.Contains(got, "id5") {
					t.Errorf("one-shot %v: replaced vector not found: %v", opts.OneShot, got)
				}
				got := embeddings(t, s3, c.ID)
				if len(got) != len(before) {
					t.Fatalf("one-shot %v: %d records, want %d", opts.OneShot, len(got), len(before))
				}
				for id, v := range before {
					if !slices.EqualFunc(got[id], v, func(a, b float32) bool { return math.Abs(float64(a-b)) <= 1e-5*math.Abs(float64(b))+1e-6 }) {
						t.Fatalf("one-shot %v: %s differs from the loaded store's", opts.OneShot, id)
					}
				}
				if opts.OneShot && s3.Stats().InPlaceReads == 0 {
					t.Errorf("the one-shot store did not read in place")
				}
				if err := s3.Check(ctx); err != nil {
					t.Fatal(err)
				}
				if err := s3.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if v, _ := fileVersion(t, dir); v != 4 {
				t.Errorf("file version %d, want 4", v)
			}
		})
	}
}

// TestRecodeToSQ8R converts an SQ8 collection to sq8r while a second store
// has it loaded: every embedding reads back as before (SQ8 codes are kept
// as rows without a centroid), the table is trained and stored, new writes
// are coded against it, Repair rebuilds the collection from its rows, and
// the collection converts back to SQ8.
func TestRecodeToSQ8R(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s1 := openStore(t, dir)
	s2 := openStore(t, dir)
	c := mustCreate(t, s1, chroma.CreateCollectionRequest{Name: "mmm", Metadata: sq8Meta("cosine")})
	n := index.TrainRows + 500
	vecs := clusteredVecs(rand.New(rand.NewPCG(8, 1)), n+200, 32)
	addVecs(t, s1, c.ID, vecs[:n])
	before := embeddings(t, s2, c.ID)
	if err := s1.Recode(ctx, c.ID, chroma.CodeSQ8R, nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*vecstore.Store{s1, s2} {
		got := embeddings(t, s, c.ID)
		for id, v := range before {
			if !slices.EqualFunc(got[id], v, func(a, b float32) bool { return math.Abs(float64(a-b)) <= 1e-6*math.Abs(float64(b))+1e-6 }) {
				t.Fatalf("%s changed by the recode", id)
			}
		}
	}
	req := chroma.AddRequest{}
	for i := n; i < n+200; i++ {
		req.IDs = append(req.IDs, fmt.Sprintf("id%d", i))
		req.Embeddings = append(req.Embeddings, vecs[i])
	}
	if err := s2.Add(ctx, c.ID, req); err != nil {
		t.Fatal(err)
	}
	if r := recallAt10(t, s1, c.ID, vecs, true); r < 0.95 {
		t.Errorf("recall@10 after recode %.3f", r)
	}
	want := embeddings(t, s1, c.ID)
	for i := n; i < n+200; i++ {
		if !nearlyEqual(want[fmt.Sprintf("id%d", i)], vecs[i]) {
			t.Fatalf("id%d read back wrong", i)
		}
	}
	for _, s := range []*vecstore.Store{s1, s2} {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := vecstore.Repair(ctx, dir, vecstore.Options{})
	if err != nil || rep.Records != n+200 {
		t.Fatalf("repair: %+v %v", rep, err)
	}
	s3 := openStore(t, dir)
	got := embeddings(t, s3, c.ID)
	for id, v := range want {
		if !slices.EqualFunc(got[id], v, func(a, b float32) bool { return math.Abs(float64(a-b)) <= 1e-6*math.Abs(float64(b))+1e-6 }) {
			t.Fatalf("%s changed by Repair", id)
		}
	}
	if r := recallAt10(t, s3, c.ID, vecs, true); r < 0.95 {
		t.Errorf("recall@10 after repair %.3f", r)
	}
	if err := s3.Recode(ctx, c.ID, chroma.CodeSQ8, nil); err != nil {
		t.Fatal(err)
	}
	for id, v := range embeddings(t, s3, c.ID) {
		if !withinStep(v, want[id]) {
			t.Fatalf("%s after recoding back to SQ8", id)
		}
	}
}

// TestRecodeToSQ8RKilled kills a real process with SIGKILL while it
// converts an SQ8 collection to sq8r: after each kill the collection is
// wholly SQ8 or wholly sq8r, every embedding as before either way (the
// SQ8 codes are kept), and the conversion then completes.
func TestRecodeToSQ8RKilled(t *testing.T) {
	n, dim, rounds := 12000, 64, 4
	if testing.Short() {
		n, rounds = index.TrainRows+1000, 2
	}
	ctx := context.Background()
	src := t.TempDir()
	s, err := vecstore.Open(ctx, src, vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := mustCreate(t, s, chroma.CreateCollectionRequest{Name: "migrate", Metadata: sq8Meta("cosine")})
	vecs := clusteredVecs(rand.New(rand.NewPCG(3, 4)), n, dim)
	addVecs(t, s, c.ID, vecs)
	before := embeddings(t, s, c.ID)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	killRecodes(t, src, chroma.CodeSQ8R, rounds, func(round int, s *vecstore.Store, collID string, converted, finished bool) {
		got := embeddings(t, s, collID)
		if len(got) != n {
			t.Fatalf("round %d: %d records after the kill, want %d", round, len(got), n)
		}
		for id, v := range before {
			if !slices.EqualFunc(got[id], v, func(a, b float32) bool { return math.Abs(float64(a-b)) <= 1e-6*math.Abs(float64(b))+1e-6 }) {
				t.Fatalf("round %d (converted %v): %s read back wrong", round, converted, id)
			}
		}
		if err := s.Recode(ctx, collID, chroma.CodeSQ8R, nil); err != nil {
			t.Fatal(err)
		}
		findsThemselves(t, s, collID, vecs, 0, len(vecs), fmt.Sprintf("round %d: after completing", round))
	})
}

// TestSQ8RRefusedCode: a vector code other than the three is refused
// naming them all.
func TestSQ8RRefusedCode(t *testing.T) {
	s := openStore(t, t.TempDir())
	_, err := s.CreateCollection(context.Background(), chroma.CreateCollectionRequest{Name: "xxx",
		Metadata: chroma.Metadata{chroma.MetaVectorCode: where.String("sq4")}})
	if err == nil || !strings.Contains(err.Error(), `"sq8r"`) {
		t.Fatalf("err %v", err)
	}
}

// fixtureV4Vecs are the vectors of testdata/format-v4.db's trained
// collection: index.TrainRows+100 of dimension 4, from a fixed seed.
func fixtureV4Vecs() [][]float32 {
	return clusteredVecs(rand.New(rand.NewPCG(44, 4)), index.TrainRows+100, 4)
}

// TestFrozenFixtureV4 opens testdata/format-v4.db.zst, written by format
// version 4 and never regenerated (unless -rewrite and the file is
// missing): an sq8r collection below its training size (rows without a
// centroid) and one trained (a snapshot, then writes after it in the log),
// both cosine. Reads and searches answer from the rows and the stored
// table, loaded and in place.
func TestFrozenFixtureV4(t *testing.T) {
	ctx := context.Background()
	fixture := "testdata/format-v4.db.zst" // zstd: mostly empty 16 KiB pages
	small := [][]float32{{1, 0, 0.5, 0}, {0, 1, 0.25, 0}, {1, 1, -1, 0}, {0.5, -0.5, 0, 1}}
	vecs := fixtureV4Vecs()
	n := len(vecs)
	if _, err := os.Stat(fixture); os.IsNotExist(err) && *rewrite {
		dir := t.TempDir()
		s, err := vecstore.Open(ctx, dir, vecstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := mustCreate(t, s, chroma.CreateCollectionRequest{Name: "fixture-small", Metadata: sq8rMeta("cosine")})
		if err := s.Add(ctx, c.ID, chroma.AddRequest{IDs: []string{"a", "b", "c", "d"}, Embeddings: small,
			Metadatas: []chroma.Metadata{{"n": where.Int(1)}, {"n": where.Int(2)}, nil, nil}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Checkpoint(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		md := sq8rMeta("cosine")
		md["hnsw:M"] = where.Int(4) // a smaller file
		c = mustCreate(t, s, chroma.CreateCollectionRequest{Name: "fixture-trained", Metadata: md})
		addVecs(t, s, c.ID, vecs[:n-10])
		if err := s.Checkpoint(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		addVecs(t, s, c.ID, vecs) // the last 10 are in the log only (the others exist: Add skips them)
		if err := s.Delete(ctx, c.ID, chroma.DeleteRequest{IDs: []string{"id1"}}); err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		b, _ := os.ReadFile(filepath.Join(dir, "vectors.db"))
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
		if err := os.WriteFile(fixture, enc.EncodeAll(b, nil), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	comp, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	raw, err := dec.DecodeAll(comp, nil)
	dec.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []vecstore.Options{{}, {OneShot: true}} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "vectors.db"), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := vecstore.Open(ctx, dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.GetCollection(ctx, chroma.DefaultTenant, chroma.DefaultDatabase, "fixture-small")
		if err != nil || c.Config.HNSW.VectorCode != chroma.CodeSQ8R {
			t.Fatalf("small: %+v %v", c.Config.HNSW, err)
		}
		res, err := s.Get(ctx, c.ID, chroma.GetRequest{IDs: []string{"b"}, Include: []chroma.Include{chroma.IncludeEmbeddings}})
		if err != nil || len(res.IDs) != 1 || !withinStep(res.Embeddings[0], small[1]) {
			t.Errorf("one-shot %v: small: get %+v %v", opts.OneShot, res, err)
		}
		if got := queryIDs(t, s, c.ID, []float32{1, 0.1, 0.4, 0}, 3, nil); !slices.Equal(got, []string{"a", "c", "d"}) {
			t.Errorf("one-shot %v: small: query %v", opts.OneShot, got)
		}
		c, err = s.GetCollection(ctx, chroma.DefaultTenant, chroma.DefaultDatabase, "fixture-trained")
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range []int{0, 7, n - 3} {
			id := fmt.Sprintf("id%d", i)
			if got := queryIDs(t, s, c.ID, vecs[i], 1, nil); got[0] != id {
				t.Errorf("one-shot %v: trained: query for %s gave %v", opts.OneShot, id, got)
			}
			res, err := s.Get(ctx, c.ID, chroma.GetRequest{IDs: []string{id}, Include: []chroma.Include{chroma.IncludeEmbeddings}})
			if err != nil || len(res.IDs) != 1 || !nearlyEqual(res.Embeddings[0], vecs[i]) {
				t.Errorf("one-shot %v: trained: get %s: %v", opts.OneShot, id, err)
			}
			// Its snapshot predates the metadata postings and row
			// scales: a filter on strings is answered by scanning.
			all, none := where.Ne("tag", where.String("x")), where.Eq("tag", where.String("x"))
			if got, want := queryIDs(t, s, c.ID, vecs[i], 5, all), queryIDs(t, s, c.ID, vecs[i], 5, nil); !slices.Equal(got, want) {
				t.Errorf("one-shot %v: trained: $ne on a key no record has gave %v, unfiltered %v", opts.OneShot, got, want)
			}
			if got := queryIDs(t, s, c.ID, vecs[i], 5, none); len(got) != 0 {
				t.Errorf("one-shot %v: trained: $eq on a key no record has gave %v", opts.OneShot, got)
			}
		}
		if k, err := s.Count(ctx, c.ID); err != nil || k != n-1 {
			t.Errorf("count %d %v", k, err)
		}
		if opts.OneShot && s.Stats().InPlaceReads == 0 {
			t.Errorf("the one-shot store did not read in place")
		}
		if err := s.Check(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSQ8RSnapshotBeforeTraining: a graph snapshot taken before the table
// was trained, then a record at one of the snapshot's slots rewritten
// after training (its row now carries a centroid the snapshot has no table
// for), as a process killed before its next snapshot leaves the file: a
// fresh store loads it, the rewritten record takes its new vector, and
// every other record reads back.
func TestSQ8RSnapshotBeforeTraining(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s1 := openStore(t, dir)
	c := mustCreate(t, s1, chroma.CreateCollectionRequest{Name: "early", Metadata: sq8rMeta("cosine")})
	n := index.TrainRows + 500
	vecs := clusteredVecs(rand.New(rand.NewPCG(8, 9)), n, 32)
	addVecs(t, s1, c.ID, vecs[:3000])
	if err := s1.Checkpoint(ctx, c.ID); err != nil { // the snapshot: no table yet
		t.Fatal(err)
	}
	// A second process that never snapshots: it trains the table, then
	// rewrites id5 (a slot of the snapshot) with a row coded against it.
	s2, err := vecstore.Open(ctx, dir, vecstore.Options{SnapshotMinOps: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	addTail(t, s2, c.ID, vecs, 3000)
	if err := s2.Upsert(ctx, c.ID, chroma.AddRequest{IDs: []string{"id5"}, Embeddings: [][]float32{vecs[9]}}); err != nil {
		t.Fatal(err)
	}
	want := embeddings(t, s2, c.ID)
	for _, opts := range []vecstore.Options{{}, {OneShot: true}} {
		s3, err := vecstore.Open(ctx, dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := s3.Check(ctx); err != nil {
			t.Fatalf("one-shot %v: %v", opts.OneShot, err)
		}
		if got := queryIDs(t, s3, c.ID, vecs[9], 2, nil); !slices.Contains(got, "id5") {
			t.Errorf("one-shot %v: the rewritten record is not found by its new vector: %v", opts.OneShot, got)
		}
		got := embeddings(t, s3, c.ID)
		if len(got) != n {
			t.Fatalf("one-shot %v: %d records, want %d", opts.OneShot, len(got), n)
		}
		for id, v := range want {
			if !slices.Equal(got[id], v) {
				t.Fatalf("one-shot %v: %s reads back differently", opts.OneShot, id)
			}
		}
		if err := s3.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSQ8RReplayAcrossTraining: a store holding an untrained sq8r
// collection in memory replays another process's writes that trained the
// table (no snapshot since: it replays the change log, not a reload), so
// it reads rows coded against a table it has not loaded yet, and answers.
func TestSQ8RReplayAcrossTraining(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s1 := openStore(t, dir)
	c := mustCreate(t, s1, chroma.CreateCollectionRequest{Name: "replayed", Metadata: sq8rMeta("cosine")})
	n := index.TrainRows + 100
	vecs := clusteredVecs(rand.New(rand.NewPCG(10, 11)), n, 32)
	addVecs(t, s1, c.ID, vecs[:3000])
	findsThemselves(t, s1, c.ID, vecs, 0, 3000, "loaded, untrained")
	s2, err := vecstore.Open(ctx, dir, vecstore.Options{SnapshotMinOps: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	addTail(t, s2, c.ID, vecs, 3000)
	findsThemselves(t, s1, c.ID, vecs, 3000, n, "after the other store trained the table")
	if err := s1.Add(ctx, c.ID, chroma.AddRequest{IDs: []string{"late"}, Embeddings: [][]float32{vecs[3]}}); err != nil {
		t.Fatalf("a write after the replay: %v", err)
	}
	if err := s1.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// addTail adds vecs[from:] (ids "id<i>") in one request.
func addTail(t testing.TB, s *vecstore.Store, coll string, vecs [][]float32, from int) {
	t.Helper()
	req := chroma.AddRequest{}
	for i := from; i < len(vecs); i++ {
		req.IDs = append(req.IDs, fmt.Sprintf("id%d", i))
		req.Embeddings = append(req.Embeddings, vecs[i])
	}
	if err := s.Add(context.Background(), coll, req); err != nil {
		t.Fatal(err)
	}
}

// findsThemselves asks s for the record nearest each of 20 of vecs[from:to]
// spread over that range (ids "id<i>"), skipping skip, and fails unless at
// least 18 find their own record. One query's top hit depends on how a
// parallel build wired the graph, so a single query would now and then
// fail on a correct store; twenty fail together only on a broken one.
func findsThemselves(t testing.TB, s *vecstore.Store, coll string, vecs [][]float32, from, to int, what string, skip ...int) {
	t.Helper()
	asked, found := 0, 0
	var missed []string
	for i := from; i < to && asked < 20; i += max(1, (to-from)/20) {
		if slices.Contains(skip, i) {
			continue
		}
		asked++
		want := fmt.Sprintf("id%d", i)
		if got := queryIDs(t, s, coll, vecs[i], 1, nil); len(got) == 1 && got[0] == want {
			found++
		} else {
			missed = append(missed, fmt.Sprintf("%s found %v", want, got))
		}
	}
	if asked < 10 {
		t.Fatalf("%s: only %d vectors in [%d, %d) to ask", what, asked, from, to)
	}
	if found < asked-2 {
		t.Errorf("%s: %d of %d vectors found their own record; %v", what, found, asked, missed)
	}
}
