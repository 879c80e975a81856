package vecstore_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

var benchCache = flag.String("vecstore.cache", "", "directory to keep BenchmarkFiltered's store in between runs (built on first use)")

// threadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID); the
// caller locks its goroutine to the thread. On a shared machine it measures
// the work of one query without the wait for a core.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// BenchmarkFiltered measures filtered query latency at n records of
// dimension 384 (the latent data of BenchmarkStore, metadata r = i mod 1000)
// at 50%, 30%, 20%, 10%, 1% and 0.1% selectivity, for the default planner
// (its cost model, then index.Search) and with Options.DelegateFiltered
// (index.Search decides alone), interleaved query by query in the same
// process: per-query thread CPU time and wall time p50/p99 (wall is the
// figure that counts: index's exact scan of a large allowed set runs on
// several goroutines), recall@10 against an exact filtered brute force.
//
//	go test ./vecstore -run '^$' -bench BenchmarkFiltered -benchtime=1x -vecstore.cache /tmp/vs100k -timeout 60m
func BenchmarkFiltered(b *testing.B) {
	n, dim := *benchN, 384
	ctx := context.Background()
	vecs := latent(n, dim, 1)
	qs := latent(200, dim, 99)
	dir := *benchCache
	if dir == "" {
		dir = b.TempDir()
	}
	idFile := filepath.Join(dir, "bench-collection")
	cidB, err := os.ReadFile(idFile)
	if err != nil {
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
		t0, cpu0 := time.Now(), cpuTime()
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
		addDur, addCPU := time.Since(t0), cpuTime()-cpu0
		b.Logf("built %d records: add %.1fs wall (%.0f records/s), %.1fs process CPU (%.0f records per CPU-second), %d snapshots",
			n, addDur.Seconds(), float64(n)/addDur.Seconds(), addCPU.Seconds(), float64(n)/addCPU.Seconds(), s.Stats().Snapshots)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		cidB = []byte(c.ID)
		if err := os.WriteFile(idFile, cidB, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cid := string(cidB)
	// Exact cosine distances of every query to every vector, once.
	dists := make([][]float32, len(qs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for qi := range qs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			d := make([]float32, n)
			for i, v := range vecs {
				d[i] = float32(cosDist(v, qs[qi]))
			}
			dists[qi] = d
		}()
	}
	wg.Wait()
	truth := func(qi int, limit int64) []string {
		idx := make([]int, 0, n)
		for i := 0; i < n; i++ {
			if int64(i%1000) < limit {
				idx = append(idx, i)
			}
		}
		d := dists[qi]
		sort.Slice(idx, func(a, c int) bool { return d[idx[a]] < d[idx[c]] })
		out := make([]string, 0, 10)
		for _, i := range idx[:min(10, len(idx))] {
			out = append(out, fmt.Sprintf("id%d", i))
		}
		return out
	}
	stores := []struct {
		name string
		opts vecstore.Options
	}{{"planner", vecstore.Options{}}, {"delegate", vecstore.Options{DelegateFiltered: true}}}
	ss := make([]*vecstore.Store, len(stores))
	for i, st := range stores {
		s, err := vecstore.Open(ctx, dir, st.opts)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Count(ctx, cid); err != nil { // load
			b.Fatal(err)
		}
		ss[i] = s
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	k := 10
	for _, tc := range []struct {
		name  string
		limit int64
	}{{"sel50", 500}, {"sel30", 300}, {"sel20", 200}, {"sel10", 100}, {"sel1", 10}, {"sel0.1", 1}} {
		w := where.Lt("r", where.Int(tc.limit))
		want := make([][]string, len(qs))
		for qi := range qs {
			want[qi] = truth(qi, tc.limit)
		}
		cpu := make([][]time.Duration, len(ss))
		wall := make([][]time.Duration, len(ss))
		recall := make([]float64, len(ss))
		for rep := 0; rep < 3; rep++ {
			for qi, q := range qs {
				for si, s := range ss {
					c0, t0 := threadCPU(), time.Now()
					res, err := s.Query(ctx, cid, chroma.QueryRequest{Embeddings: [][]float32{q}, NResults: &k, Where: w,
						Include: []chroma.Include{chroma.IncludeDistances}})
					cpu[si] = append(cpu[si], threadCPU()-c0)
					wall[si] = append(wall[si], time.Since(t0))
					if err != nil {
						b.Fatal(err)
					}
					if rep == 0 {
						hit := 0
						for _, id := range res.IDs[0] {
							if slices.Contains(want[qi], id) {
								hit++
							}
						}
						recall[si] += float64(hit) / float64(len(want[qi])) / float64(len(qs))
					}
				}
			}
		}
		for si, st := range stores {
			b.ReportMetric(float64(pct(cpu[si], 0.5).Microseconds())/1000, tc.name+"-"+st.name+"-cpu-p50-ms")
			b.ReportMetric(float64(pct(cpu[si], 0.99).Microseconds())/1000, tc.name+"-"+st.name+"-cpu-p99-ms")
			b.ReportMetric(float64(pct(wall[si], 0.5).Microseconds())/1000, tc.name+"-"+st.name+"-wall-p50-ms")
			b.ReportMetric(float64(pct(wall[si], 0.99).Microseconds())/1000, tc.name+"-"+st.name+"-wall-p99-ms")
			b.ReportMetric(recall[si], tc.name+"-"+st.name+"-recall@10")
		}
		b.Logf("%s: planner cpu p50 %v p99 %v wall p50 %v p99 %v recall %.4f | delegate cpu p50 %v p99 %v wall p50 %v p99 %v recall %.4f",
			tc.name, pct(cpu[0], 0.5), pct(cpu[0], 0.99), pct(wall[0], 0.5), pct(wall[0], 0.99), recall[0],
			pct(cpu[1], 0.5), pct(cpu[1], 0.99), pct(wall[1], 0.5), pct(wall[1], 0.99), recall[1])
	}
	// Unfiltered and 10% recall against ef_search (Chroma's modify), to
	// choose ef_search for engine-created collections; restored to 100.
	s := ss[0]
	for _, ef := range []int{50, 100, 200, 400} {
		ef := ef
		if err := s.ModifyCollection(ctx, cid, chroma.ModifyCollectionRequest{HNSW: &chroma.HNSWParams{EfSearch: &ef}}); err != nil {
			b.Fatal(err)
		}
		for _, limit := range []int64{1000, 100} {
			var w *where.Expr
			if limit < 1000 {
				w = where.Lt("r", where.Int(limit))
			}
			var cpu []time.Duration
			var recall float64
			for qi, q := range qs {
				want := truth(qi, limit)
				c0 := threadCPU()
				res, err := s.Query(ctx, cid, chroma.QueryRequest{Embeddings: [][]float32{q}, NResults: &k, Where: w})
				cpu = append(cpu, threadCPU()-c0)
				if err != nil {
					b.Fatal(err)
				}
				hit := 0
				for _, id := range res.IDs[0] {
					if slices.Contains(want, id) {
						hit++
					}
				}
				recall += float64(hit) / float64(len(want)) / float64(len(qs))
			}
			// stderr: the benchmark log is truncated after 10 lines.
			fmt.Fprintf(os.Stderr, "ef_search %d, filter r < %d: recall@10 %.4f, cpu p50 %v p99 %v\n", ef, limit, recall, pct(cpu, 0.5), pct(cpu, 0.99))
		}
	}
	ef := 100
	if err := s.ModifyCollection(ctx, cid, chroma.ModifyCollectionRequest{HNSW: &chroma.HNSWParams{EfSearch: &ef}}); err != nil {
		b.Fatal(err)
	}
}
