package vecstore_test

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

var benchN = flag.Int("vecstore.n", 100000, "records in BenchmarkStore")

// latent returns n vectors of dimension dim generated from a seed by a
// random linear map of a 32-dimensional Gaussian latent plus small noise:
// like real embeddings, they have a low intrinsic dimension (i.i.d.
// Gaussian vectors in 384 dimensions have almost equal distances, so
// neighbour lists are arbitrary there).
func latent(n, dim int, seed uint64) [][]float32 {
	const k = 32
	r := rand.New(rand.NewPCG(1234, 5678)) // the map is shared by data and queries
	w := make([][]float32, dim)
	for i := range w {
		w[i] = randVec(r, k)
	}
	r = rand.New(rand.NewPCG(seed, seed+1))
	out := make([][]float32, n)
	for i := range out {
		z := randVec(r, k)
		v := make([]float32, dim)
		for j := range v {
			var s float32
			for t := 0; t < k; t++ {
				s += w[j][t] * z[t]
			}
			v[j] = s + 0.5*float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

func cosDist(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return 1 - dot/(sqrt(na)*sqrt(nb))
}

func sqrt(x float64) float64 {
	z := x
	if z == 0 {
		return 0
	}
	for i := 0; i < 30; i++ {
		z = (z + x/z) / 2
	}
	return z
}

// bruteForce returns the ids of the 10 nearest allowed vectors for each query.
func bruteForce(vecs, qs [][]float32, allowed func(i int) bool) [][]string {
	out := make([][]string, len(qs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for qi := range qs {
		wg.Add(1)
		sem <- struct{}{}
		go func(qi int) {
			defer wg.Done()
			defer func() { <-sem }()
			type cand struct {
				i int
				d float64
			}
			var cs []cand
			for i, v := range vecs {
				if allowed(i) {
					cs = append(cs, cand{i, cosDist(v, qs[qi])})
				}
			}
			sort.Slice(cs, func(a, b int) bool { return cs[a].d < cs[b].d })
			for _, c := range cs[:min(10, len(cs))] {
				out[qi] = append(out[qi], fmt.Sprintf("id%d", c.i))
			}
		}(qi)
	}
	wg.Wait()
	return out
}

func pct(lat []time.Duration, p float64) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func dirSize(dir string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// BenchmarkStore measures, at n records of dimension 384 (cosine; synthetic
// low-rank data, see latent): add throughput in batches of 1,000, file size against raw vector
// bytes, cold open to first query, and query latency p50/p99 with recall@10
// unfiltered and at 10% and 1% selectivity. Run with -benchtime=1x:
//
//	go test ./vecstore -run '^$' -bench BenchmarkStore -benchtime=1x -timeout 60m
func BenchmarkStore(b *testing.B) {
	n, dim := *benchN, 384
	b.Run(fmt.Sprintf("n=%d/dim=%d", n, dim), func(b *testing.B) {
		ctx := context.Background()
		vecs := latent(n, dim, 1)
		qs := latent(200, dim, 99)
		for i := 0; i < b.N; i++ {
			dir := b.TempDir()
			s, err := vecstore.Open(ctx, dir, vecstore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			space := chroma.SpaceCosine
			c, err := s.CreateCollection(ctx, chroma.CreateCollectionRequest{Name: "bench",
				HNSW: &chroma.HNSWParams{Space: &space}})
			if err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			for from := 0; from < n; from += 1000 {
				req := chroma.AddRequest{}
				for j := from; j < min(from+1000, n); j++ {
					req.IDs = append(req.IDs, fmt.Sprintf("id%d", j))
					req.Embeddings = append(req.Embeddings, vecs[j])
					req.Metadatas = append(req.Metadatas, chroma.Metadata{"r": where.Int(int64(j % 1000))})
				}
				if err := s.Add(ctx, c.ID, req); err != nil {
					b.Fatal(err)
				}
			}
			addDur := time.Since(t0)
			b.ReportMetric(float64(n)/addDur.Seconds(), "add-records/s")
			st := s.Stats()
			t0 = time.Now()
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			closeDur := time.Since(t0)
			size := dirSize(dir)
			raw := int64(n) * int64(dim) * 4
			b.ReportMetric(float64(size)/float64(raw), "file/raw-vectors")

			runtime.GC()
			cpu0 := cpuTime()
			t0 = time.Now()
			s, err = vecstore.Open(ctx, dir, vecstore.Options{Logger: slog.New(slog.NewTextHandler(os.Stderr,
				&slog.HandlerOptions{Level: slog.LevelDebug}))})
			if err != nil {
				b.Fatal(err)
			}
			k := 10
			if _, err := s.Query(ctx, c.ID, chroma.QueryRequest{Embeddings: qs[:1], NResults: &k}); err != nil {
				b.Fatal(err)
			}
			openDur := time.Since(t0)
			openCPU := cpuTime() - cpu0
			b.ReportMetric(openDur.Seconds()*1000, "cold-open-ms")
			b.ReportMetric(openCPU.Seconds()*1000, "cold-open-cpu-ms")

			for _, tc := range []struct {
				name  string
				limit int64
			}{{"all", 1000}, {"sel10", 100}, {"sel1", 10}} {
				var w *where.Expr
				if tc.limit < 1000 {
					w = where.Lt("r", where.Int(tc.limit))
				}
				want := bruteForce(vecs, qs, func(i int) bool { return int64(i%1000) < tc.limit })
				var lat []time.Duration
				var recall float64
				for qi, q := range qs {
					t1 := time.Now()
					res, err := s.Query(ctx, c.ID, chroma.QueryRequest{Embeddings: [][]float32{q}, NResults: &k, Where: w,
						Include: []chroma.Include{chroma.IncludeDistances}})
					lat = append(lat, time.Since(t1))
					if err != nil {
						b.Fatal(err)
					}
					hit := 0
					for _, id := range res.IDs[0] {
						if slices.Contains(want[qi], id) {
							hit++
						}
					}
					recall += float64(hit) / float64(len(want[qi]))
				}
				recall /= float64(len(qs))
				b.ReportMetric(float64(pct(lat, 0.5).Microseconds())/1000, tc.name+"-p50-ms")
				b.ReportMetric(float64(pct(lat, 0.99).Microseconds())/1000, tc.name+"-p99-ms")
				b.ReportMetric(recall, tc.name+"-recall@10")
			}
			// Unfiltered recall with ef_search raised to 200 (Chroma's
			// modify: new_configuration.hnsw.ef_search).
			ef := 200
			if err := s.ModifyCollection(ctx, c.ID, chroma.ModifyCollectionRequest{HNSW: &chroma.HNSWParams{EfSearch: &ef}}); err != nil {
				b.Fatal(err)
			}
			{
				want := bruteForce(vecs, qs, func(int) bool { return true })
				var lat []time.Duration
				var recall float64
				for qi, q := range qs {
					t1 := time.Now()
					res, err := s.Query(ctx, c.ID, chroma.QueryRequest{Embeddings: [][]float32{q}, NResults: &k})
					lat = append(lat, time.Since(t1))
					if err != nil {
						b.Fatal(err)
					}
					hit := 0
					for _, id := range res.IDs[0] {
						if slices.Contains(want[qi], id) {
							hit++
						}
					}
					recall += float64(hit) / float64(len(want[qi]))
				}
				b.ReportMetric(float64(pct(lat, 0.5).Microseconds())/1000, "all-ef200-p50-ms")
				b.ReportMetric(float64(pct(lat, 0.99).Microseconds())/1000, "all-ef200-p99-ms")
				b.ReportMetric(recall/float64(len(qs)), "all-ef200-recall@10")
			}
			b.Logf("n=%d dim=%d: add %.1fs (%.0f records/s, %d snapshots), close %.2fs, dir %d bytes = %.2fx raw vectors (%d), cold open+first query %v; %+v",
				n, dim, addDur.Seconds(), float64(n)/addDur.Seconds(), st.Snapshots, closeDur.Seconds(), size,
				float64(size)/float64(raw), raw, openDur, s.Stats())
			_ = s.Close()
		}
	})
}

// cpuTime is the process's user+system CPU time: on a shared machine it
// shows what cold open costs independently of the wait for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
