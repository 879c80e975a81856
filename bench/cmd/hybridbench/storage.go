package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// runStorage measures what message vectors cost: n messages of the speed
// suite's corpus (8-40 words, about 150 characters, like conversation
// turns) are stored and embedded by its stand-in embedder, and the store is
// measured four ways in one process: built with float32 vectors (what
// cairn wrote first), that store converted in place to SQ8 (the first
// migration), then to sq8r (the migration of SQ8 stores: SQ8 codes are
// kept, the centroids trained), and a store built with sq8r (what cairn
// writes now: rows coded against the centroids from 4,096 messages). Each row
// gives the vector files against the messages table, the cold open plus
// first semantic query, the live heap of the loaded collection, recall@10
// of semantic search (similarity ranking) against an exact scan of the
// float32 vectors, and the query p50.
//
// It is long because it is one benchmark script whose phases share the
// corpus, the exact answers and the table they print.
func runStorage(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("storage", flag.ExitOnError)
	n := fs.Int("n", 100000, "messages")
	dim := fs.Int("dim", 384, "vector dimension of the synthetic embedder")
	nq := fs.Int("queries", 100, "queries (recall and latency)")
	seed := fs.Uint64("seed", 1, "corpus seed")
	fs.Parse(args)

	g := newGen(*seed)
	msgs := make([]engine.NewMessage, *n)
	texts := make([]string, *n)
	for i := range msgs {
		msgs[i] = g.message(i)
		texts[i] = msgs[i].Content
	}
	synth := newSynth(*dim, g.vocab)
	// Queries are held-out messages of the same corpus: two to four rare
	// words (the speed suite's queries) are far from every message under
	// this embedder, where no graph search finds the exact neighbours
	// (recall@10 0.18 for float32 at 100k) and the figure says nothing
	// about the codes.
	var qs []string
	for i := range *nq {
		qs = append(qs, g.message(*n+i).Content)
	}
	// The exact top 10 of every query over the float32 vectors, by content
	// (the corpus's contents are unique: each ends with its index).
	vecs, err := synth.Embed(ctx, texts)
	if err != nil {
		return err
	}
	qvecs, err := synth.Embed(ctx, qs)
	if err != nil {
		return err
	}
	exact := make([]map[string]bool, len(qs))
	for qi, q := range qvecs {
		type sc struct {
			i int
			s float32
		}
		best := make([]sc, 0, 11)
		for i, v := range vecs {
			var d float32
			for j := range v {
				d += v[j] * q[j]
			}
			if len(best) < 10 || d > best[len(best)-1].s {
				best = append(best, sc{i, d})
				slices.SortFunc(best, func(a, b sc) int {
					if a.s > b.s {
						return -1
					}
					if a.s < b.s {
						return 1
					}
					return 0
				})
				best = best[:min(len(best), 10)]
			}
		}
		exact[qi] = map[string]bool{}
		for _, b := range best {
			exact[qi][texts[b.i]] = true
		}
	}
	vecs = nil

	fmt.Printf("# message vector storage, n=%d dim=%d, %s, %s %s/%s, %d CPUs\n\n", *n, *dim, time.Now().UTC().Format(time.RFC3339), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Println("| store | messages table bytes | vectors/ bytes | vector bytes per message | vectors / messages table | cold open + first query | live heap after load | recall@10 | query p50 |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")

	measure := func(label, dir string) error {
		runtime.GC()
		runtime.GC()
		var m0 runtime.MemStats
		runtime.ReadMemStats(&m0)
		t0 := time.Now()
		e, st, err := sqlite.OpenEngineStore(ctx, dir, engine.Options{Embedder: synth, NoVectorWorker: true}, sqlite.Options{})
		if err != nil {
			return err
		}
		defer e.Close()
		req := engine.SearchRequest{Query: qs[0], Mode: engine.ModeSemantic, Limit: 10, Ranking: engine.Ranking{Profile: engine.ProfileSimilarity}}
		if _, err := e.Search(ctx, req); err != nil {
			return err
		}
		cold := time.Since(t0)
		// The first search was answered in place while the collection
		// loads in the background: wait for the load (Count takes the
		// loaded path) before reading the heap.
		if err := waitLoaded(ctx, st); err != nil {
			return err
		}
		runtime.GC()
		runtime.GC()
		var m1 runtime.MemStats
		runtime.ReadMemStats(&m1)
		var l lat
		var recall float64
		for qi, q := range qs {
			req.Query = q
			t := time.Now()
			res, err := e.Search(ctx, req)
			if err != nil {
				return err
			}
			l = append(l, time.Since(t))
			for _, r := range res {
				if exact[qi][r.Message.Content] {
					recall++
				}
			}

		}
		recall /= float64(10 * len(qs))
		stats, err := ops.StoreStats(ctx, e)
		if err != nil {
			return err
		}
		b := stats.Bytes
		fmt.Printf("| %s | %d | %d | %.0f | %.2fx | %s | %.1f MB | %.4f | %s |\n", label, b.Messages, b.Vectors, b.VectorsPerMessage, b.VectorsToMessages,
			ms(cold), float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc))/1e6, recall, ms(l.pct(.5)))
		return nil
	}
	recode := func(dir string, code chroma.VectorCode) error {
		e, st, err := sqlite.OpenEngineStore(ctx, dir, engine.Options{Embedder: synth, NoVectorWorker: true}, sqlite.Options{})
		if err != nil {
			return err
		}
		defer e.Close()
		colls, err := st.VectorStore().ListCollections(ctx, chroma.DefaultTenant, "cairn", nil, 0)
		if err != nil {
			return err
		}
		if len(colls) != 1 {
			return errors.New("storage: expected one message collection")
		}
		return st.VectorStore().Recode(ctx, colls[0].ID, code, nil)
	}
	build := func(code chroma.VectorCode) (string, error) {
		dir, err := os.MkdirTemp("", "hybridbench-storage-")
		if err != nil {
			return "", err
		}
		e, err := sqlite.OpenEngine(ctx, dir, engine.Options{Embedder: synth, NoVectorWorker: true}, sqlite.Options{})
		if err != nil {
			return dir, err
		}
		for c := range 10 {
			if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: fmt.Sprintf("c%d", c)}); err != nil {
				return dir, err
			}
		}
		// The first message creates the collection, so that its code can
		// be chosen before the graph is built.
		if _, err := e.StoreMessages(ctx, msgs[:1]); err != nil {
			return dir, err
		}
		if err := ops.SyncVectors(ctx, e, nil); err != nil {
			return dir, err
		}
		if err := e.Close(); err != nil {
			return dir, err
		}
		if err := recode(dir, code); err != nil {
			return dir, err
		}
		if e, err = sqlite.OpenEngine(ctx, dir, engine.Options{Embedder: synth, NoVectorWorker: true}, sqlite.Options{}); err != nil {
			return dir, err
		}
		t0, c0 := time.Now(), cpuTime()
		for i := 1; i < len(msgs); i += 1000 {
			if _, err := e.StoreMessages(ctx, msgs[i:min(i+1000, len(msgs))]); err != nil {
				return dir, err
			}
		}
		if err := ops.SyncVectors(ctx, e, nil); err != nil {
			return dir, err
		}
		fmt.Fprintf(os.Stderr, "storage: built %s store in %.1f s wall, %.1f CPU s\n", code, time.Since(t0).Seconds(), (cpuTime() - c0).Seconds())
		return dir, e.Close()
	}

	dir, err := build(chroma.CodeFloat32)
	defer os.RemoveAll(dir)
	if err != nil {
		return err
	}
	if err := measure("float32 (built as before)", dir); err != nil {
		return err
	}
	t0 := time.Now()
	if err := recode(dir, chroma.CodeSQ8); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "storage: converted to sq8 in %.1f s\n", time.Since(t0).Seconds())
	if err := measure("float32 store converted to SQ8", dir); err != nil {
		return err
	}
	t0 = time.Now()
	if err := recode(dir, chroma.CodeSQ8R); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "storage: converted to sq8r in %.1f s\n", time.Since(t0).Seconds())
	if err := measure("SQ8 store converted to sq8r", dir); err != nil {
		return err
	}
	dir2, err := build(chroma.CodeSQ8R)
	defer os.RemoveAll(dir2)
	if err != nil {
		return err
	}
	return measure("sq8r (built as now)", dir2)
}

// waitLoaded returns once the data dir's vector collections are loaded in
// memory.
func waitLoaded(ctx context.Context, st *sqlite.Store) error {
	vs := st.VectorStore()
	if vs == nil {
		return nil
	}
	colls, err := vs.ListCollections(ctx, chroma.DefaultTenant, "cairn", nil, 0)
	if err != nil {
		return err
	}
	for _, c := range colls {
		if _, err := vs.Count(ctx, c.ID); err != nil {
			return err
		}
	}
	return nil
}
