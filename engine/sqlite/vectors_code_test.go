package sqlite_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/enginetest"
	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// gunzipTo writes the decompressed file src to dst.
func gunzipTo(t *testing.T, src, dst string) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// vectorsV1Dir copies the frozen data dir testdata/vectors-v1 into a
// temporary directory. It was written once by cairn before message vectors
// were 8-bit codes (commit eff2db6: 40 messages of enginetest.Batch(40, 3), embedded
// by enginetest.NewHashEmbedder("hash-fixture", 16) through SyncVectors, then Close):
// float32 vectors, vecstore format version 1, ef_construction 100. Keep it
// forever.
func vectorsV1Dir(t *testing.T) string {
	dir := t.TempDir()
	gunzipTo(t, filepath.Join("testdata", "vectors-v1", "cairn.db.gz"), filepath.Join(dir, sqlite.DBFile))
	gunzipTo(t, filepath.Join("testdata", "vectors-v1", "vectors.db.gz"), filepath.Join(dir, sqlite.VectorsDir, "vectors.db"))
	return dir
}

func messageCollection(t *testing.T, e *engine.Engine) chroma.Collection {
	t.Helper()
	colls, err := enginetest.StoreOf(e).VectorStore().ListCollections(context.Background(), chroma.DefaultTenant, "cairn", nil, 0)
	if err != nil || len(colls) != 1 {
		t.Fatalf("message collections: %v %v", colls, err)
	}
	return colls[0]
}

func semanticTop(t *testing.T, e *engine.Engine, q string) string {
	t.Helper()
	r, err := e.SearchDetailed(context.Background(), engine.SearchRequest{Query: q, Mode: engine.ModeSemantic, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode != engine.ModeSemantic || len(r.Results) == 0 {
		t.Fatalf("semantic search %q: %+v", q, r)
	}
	// The query's own message among the first three counts as found: the
	// graph over 8-bit codes is approximate, and which near neighbour it
	// returns first depends on the order its parallel build inserted them.
	for _, res := range r.Results {
		if res.Message.Content == q {
			return q
		}
	}
	return r.Results[0].Message.Content
}

// TestMessageVectorsAreSQ8R checks what a new store gets: message
// collections with 8-bit residual codes and the design card's
// ef_construction 200.
func TestMessageVectorsAreSQ8R(t *testing.T) {
	emb := enginetest.NewHashEmbedder("hash-a", 32)
	e := enginetest.OpenDir(t, t.TempDir(), engine.Options{Embedder: emb, NoVectorWorker: true})
	msgs := enginetest.Batch(30, 2)
	if _, err := e.StoreMessages(context.Background(), msgs); err != nil {
		t.Fatal(err)
	}
	enginetest.MustSync(t, e)
	c := messageCollection(t, e)
	if c.Config.HNSW.VectorCode != chroma.CodeSQ8R || c.Config.HNSW.EfConstruction != 200 || c.Config.HNSW.Space != chroma.SpaceCosine {
		t.Fatalf("message collection config %+v", c.Config.HNSW)
	}
	if got := semanticTop(t, e, msgs[9].Content); got != msgs[9].Content {
		t.Errorf("semantic top %q, want %q", got, msgs[9].Content)
	}
	enginetest.MustConsistent(t, e)
	// cairn stats shows the vectors' storage budget.
	st, err := ops.StoreStats(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	b := st.Bytes
	if b.Vectors == 0 || b.Messages == 0 || b.VectorsPerMessage != float64(b.Vectors)/30 || b.VectorsToMessages != float64(b.Vectors)/float64(b.Messages) {
		t.Errorf("stats bytes %+v", b)
	}
}

// TestFrozenVectorsV1 opens the frozen data dir written before message
// vectors were 8-bit codes: it is read as it is, then ConvertVectors turns
// its message collection into sq8r in place (with progress), and search
// keeps finding the same messages before, after and across a reopen.
func TestFrozenVectorsV1(t *testing.T) {
	ctx := context.Background()
	dir := vectorsV1Dir(t)
	emb := enginetest.NewHashEmbedder("hash-fixture", 16)
	msgs := enginetest.Batch(40, 3)
	e, err := enginetest.OpenEngine(ctx, dir, engine.Options{Embedder: emb, NoVectorWorker: true})
	if err != nil {
		t.Fatal(err)
	}
	c := messageCollection(t, e)
	if c.Config.HNSW.VectorCode != "" || c.Config.HNSW.EfConstruction != 100 {
		t.Fatalf("fixture collection config %+v, want float32 with ef_construction 100", c.Config.HNSW)
	}
	for _, i := range []int{0, 17, 39} {
		if got := semanticTop(t, e, msgs[i].Content); got != msgs[i].Content {
			t.Fatalf("before converting: top %q, want %q", got, msgs[i].Content)
		}
	}
	var calls, last, total int
	if err := enginetest.StoreOf(e).ConvertVectors(ctx, func(coll string, done, n int) { calls, last, total = calls+1, done, n }); err != nil {
		t.Fatal(err)
	}
	if calls == 0 || last != 40 || total != 40 {
		t.Errorf("progress: %d calls, last %d of %d", calls, last, total)
	}
	if c := messageCollection(t, e); c.Config.HNSW.VectorCode != chroma.CodeSQ8R {
		t.Fatalf("after converting: %+v", c.Config.HNSW)
	}
	for _, i := range []int{0, 17, 39} {
		if got := semanticTop(t, e, msgs[i].Content); got != msgs[i].Content {
			t.Errorf("after converting: top %q, want %q", got, msgs[i].Content)
		}
	}
	enginetest.MustConsistent(t, e)
	if err := ops.Check(ctx, e); err != nil {
		t.Fatal(err)
	}
	// Converting again does nothing.
	calls = 0
	if err := enginetest.StoreOf(e).ConvertVectors(ctx, func(string, int, int) { calls++ }); err != nil || calls != 0 {
		t.Errorf("second conversion: %v, %d progress calls", err, calls)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = enginetest.OpenDir(t, dir, engine.Options{Embedder: emb, NoVectorWorker: true})
	if c := messageCollection(t, e); c.Config.HNSW.VectorCode != chroma.CodeSQ8R {
		t.Fatalf("after reopen: %+v", c.Config.HNSW)
	}
	if got := semanticTop(t, e, msgs[17].Content); got != msgs[17].Content {
		t.Errorf("after reopen: top %q", got)
	}
}

// TestWorkerConvertsVectors: the background worker (cairn serve) converts
// an old store's message vectors when it starts.
func TestWorkerConvertsVectors(t *testing.T) {
	dir := vectorsV1Dir(t)
	e := enginetest.OpenDir(t, dir, engine.Options{Embedder: enginetest.NewHashEmbedder("hash-fixture", 16)})
	deadline := time.Now().Add(2 * time.Minute) // generous: the machine may be loaded
	for messageCollection(t, e).Config.HNSW.VectorCode != chroma.CodeSQ8R {
		if time.Now().After(deadline) {
			t.Fatal("the worker did not convert the message vectors")
		}
		time.Sleep(20 * time.Millisecond)
	}
	enginetest.MustConsistent(t, e)
}

// TestConvertSQ8Vectors: a message collection of plain SQ8 codes (what
// cairn wrote before residual codes) is converted to sq8r in place by
// ConvertVectors, past the training size, every vector read back as it
// was (SQ8 codes are kept as rows without a centroid), and search keeps
// finding the same messages, also across a reopen.
func TestConvertSQ8Vectors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	emb := enginetest.NewHashEmbedder("hash-sq8", 16)
	e, err := enginetest.OpenEngine(ctx, dir, engine.Options{Embedder: emb, NoVectorWorker: true})
	if err != nil {
		t.Fatal(err)
	}
	msgs := enginetest.Batch(4200, 7)
	if _, err := e.StoreMessages(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	enginetest.MustSync(t, e)
	c := messageCollection(t, e)
	// The collection as an earlier cairn left it: plain SQ8 codes.
	if err := enginetest.StoreOf(e).VectorStore().Recode(ctx, c.ID, chroma.CodeSQ8, nil); err != nil {
		t.Fatal(err)
	}
	if c := messageCollection(t, e); c.Config.HNSW.VectorCode != chroma.CodeSQ8 {
		t.Fatalf("before converting: %+v", c.Config.HNSW)
	}
	before, err := enginetest.StoreOf(e).VectorStore().Get(ctx, c.ID, chroma.GetRequest{Include: []chroma.Include{chroma.IncludeEmbeddings}})
	if err != nil {
		t.Fatal(err)
	}
	if err := enginetest.StoreOf(e).ConvertVectors(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if c := messageCollection(t, e); c.Config.HNSW.VectorCode != chroma.CodeSQ8R {
		t.Fatalf("after converting: %+v", c.Config.HNSW)
	}
	after, err := enginetest.StoreOf(e).VectorStore().Get(ctx, c.ID, chroma.GetRequest{Include: []chroma.Include{chroma.IncludeEmbeddings}})
	if err != nil || len(after.IDs) != len(before.IDs) || len(after.IDs) != len(msgs) {
		t.Fatalf("after converting: %d records (before %d) %v", len(after.IDs), len(before.IDs), err)
	}
	for i := range before.IDs {
		if after.IDs[i] != before.IDs[i] || !slices.EqualFunc(after.Embeddings[i], before.Embeddings[i], func(a, b float32) bool { return math.Abs(float64(a-b)) <= 1e-6 }) {
			t.Fatalf("record %s changed by the conversion", before.IDs[i])
		}
	}
	mustFindThemselves(t, "after converting", e, msgs)
	enginetest.MustConsistent(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = enginetest.OpenDir(t, dir, engine.Options{Embedder: emb, NoVectorWorker: true})
	mustFindThemselves(t, "after reopen", e, msgs)
}

// mustFindThemselves searches for 20 of msgs spread over the whole batch
// and fails unless at least 18 find themselves among the first three. A
// converted collection that lost or scrambled its vectors finds almost
// none; an intact one can still miss one or two: the graph is approximate
// and built in parallel, so a few nodes are reached by no path the search
// takes (on this data 1 to 4 messages in 600 miss themselves, as many with
// plain SQ8 codes before the conversion as after it and after a reopen).
func mustFindThemselves(t *testing.T, when string, e *engine.Engine, msgs []engine.NewMessage) {
	t.Helper()
	var missed []string
	for k := range 20 {
		i := k * (len(msgs) - 1) / 19
		if got := semanticTop(t, e, msgs[i].Content); got != msgs[i].Content {
			missed = append(missed, fmt.Sprintf("%q (top %q)", msgs[i].Content, got))
		}
	}
	if len(missed) > 2 {
		t.Errorf("%s: %d of 20 messages not found by their own text: %s", when, len(missed), strings.Join(missed, "; "))
	}
}
