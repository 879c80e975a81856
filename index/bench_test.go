package index_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/index"
)

// benchSet is a generated data set with a built index, cached per process.
type benchSet struct {
	data, queries [][]float32
	x             *index.Index
	truth         [][]index.Result // exact top 10 per query
	build         time.Duration
}

var (
	benchMu   sync.Mutex
	benchSets = map[string]*benchSet{}
)

// benchData mirrors the data set: unit vectors from a seeded
// mixture of anisotropic Gaussian clusters, 1,000 held-out queries.
// spread controls overlap (0.35: easy, like the issue's; 1.0: hard).
func getBenchSet(b *testing.B, n, dim int, spread float64) *benchSet {
	key := fmt.Sprintf("%d/%d/%v", n, dim, spread)
	benchMu.Lock()
	defer benchMu.Unlock()
	if s, ok := benchSets[key]; ok {
		return s
	}
	r := rand.New(rand.NewPCG(2026, 1122))
	all := clustered(r, n+1000, dim, 500, spread)
	s := &benchSet{data: all[:n], queries: all[n:]}
	x, err := index.New(index.Options{Dim: dim, Space: index.Cosine, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := x.InsertBatch(context.Background(), seqIDs(0, n), s.data); err != nil {
		b.Fatal(err)
	}
	s.build = time.Since(start)
	s.x = x
	s.truth = make([][]index.Result, len(s.queries))
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(s.queries); i += runtime.GOMAXPROCS(0) {
				s.truth[i], _ = x.Exact(s.queries[i], 10, nil)
			}
		}()
	}
	wg.Wait()
	benchSets[key] = s
	return s
}

func recall10(got, want []index.Result) float64 {
	hit := 0
	for _, g := range got {
		for _, w := range want {
			if g.ID == w.ID {
				hit++
				break
			}
		}
	}
	return float64(hit) / float64(max(1, len(want)))
}

// percentiles reports p50 and p99 of the per-query latencies.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
}

var benchSizes = []struct {
	n, dim int
	spread float64
	name   string
}{
	{10000, 384, 0.35, "n=10000/dim=384"},
	{100000, 384, 0.35, "n=100000/dim=384"},
	{100000, 384, 1.0, "n=100000/dim=384/hard"},
}

// BenchmarkSearch measures single-threaded query latency and recall@10
// against the exact scan, at several ef values.
// go test -run '^$' -bench 'Search/n=100000/dim=384$' -benchtime 2000x ./index/
func BenchmarkSearch(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			for _, ef := range []int{10, 20, 40, 100, 200, 400} {
				b.Run(fmt.Sprintf("ef=%d", ef), func(b *testing.B) {
					s := getBenchSet(b, sz.n, sz.dim, sz.spread)
					b.ReportAllocs()
					lat := make([]time.Duration, 0, b.N)
					rec := 0.0
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						qi := i % len(s.queries)
						t0 := time.Now()
						res, err := s.x.Search(s.queries[qi], 10, index.SearchOptions{Ef: ef})
						lat = append(lat, time.Since(t0))
						if err != nil {
							b.Fatal(err)
						}
						rec += recall10(res, s.truth[qi])
					}
					b.StopTimer()
					b.ReportMetric(rec/float64(b.N), "recall@10")
					reportLatency(b, lat)
				})
			}
		})
	}
}

// BenchmarkExact is the floor any index must beat: a full exact scan.
func BenchmarkExact(b *testing.B) {
	for _, sz := range benchSizes[:2] {
		b.Run(sz.name, func(b *testing.B) {
			s := getBenchSet(b, sz.n, sz.dim, sz.spread)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := s.x.Exact(s.queries[i%len(s.queries)], 10, nil); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			reportLatency(b, lat)
		})
	}
}

// BenchmarkBuild measures InsertBatch of n vectors with 1 worker and with
// every core.
// go test -run '^$' -bench 'Build/n=100000' -benchtime 1x ./index/
func BenchmarkBuild(b *testing.B) {
	for _, sz := range benchSizes[:2] {
		for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("%s/workers=%d", sz.name, workers), func(b *testing.B) {
				r := rand.New(rand.NewPCG(2026, 1122))
				data := clustered(r, sz.n, sz.dim, 500, sz.spread)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					x, _ := index.New(index.Options{Dim: sz.dim, Space: index.Cosine, Seed: 1, Workers: workers})
					if err := x.InsertBatch(context.Background(), seqIDs(0, sz.n), data); err != nil {
						b.Fatal(err)
					}
					if i == 0 {
						st := x.Stats()
						raw := sz.n*sz.dim*4 + sz.n*(2*16+1)*4
						b.ReportMetric(float64(st.Bytes)/float64(raw), "mem/raw")
					}
				}
			})
		}
	}
}

// BenchmarkFiltered measures filtered search (random allow sets) at
// several selectivities: latency and recall@10 against the exact filtered
// scan.
// go test -run '^$' -bench 'Filtered/n=100000/dim=384$' -benchtime 1000x ./index/
func BenchmarkFiltered(b *testing.B) {
	for _, sz := range benchSizes[:2] {
		b.Run(sz.name, func(b *testing.B) {
			for _, sel := range []float64{0.5, 0.1, 0.03, 0.01, 0.001} {
				b.Run(fmt.Sprintf("sel=%g", sel), func(b *testing.B) {
					s := getBenchSet(b, sz.n, sz.dim, sz.spread)
					r := rand.New(rand.NewPCG(5, uint64(sel*1e6)))
					allow := newBitset(sz.n)
					for allow.GetCardinality() < uint64(sel*float64(sz.n)) {
						allow.Add(uint32(r.IntN(sz.n)))
					}
					lat := make([]time.Duration, 0, b.N)
					rec := 0.0
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						q := s.queries[i%len(s.queries)]
						t0 := time.Now()
						res, err := s.x.Search(q, 10, index.SearchOptions{Allow: allow})
						lat = append(lat, time.Since(t0))
						if err != nil {
							b.Fatal(err)
						}
						b.StopTimer()
						want, _ := s.x.Exact(q, 10, allow)
						rec += recall10(res, want)
						b.StartTimer()
					}
					b.StopTimer()
					b.ReportMetric(rec/float64(b.N), "recall@10")
					reportLatency(b, lat)
				})
			}
		})
	}
}

// BenchmarkBuildCodes measures InsertBatch of 40,000 clustered vectors
// with one worker in each code, for CPU profiles of the build:
// go test -run '^$' -bench 'BuildCodes/code=sq8r' -benchtime 1x -cpuprofile /tmp/cpu.out ./index/
func BenchmarkBuildCodes(b *testing.B) {
	const n, dim = 40000, 384
	r := rand.New(rand.NewPCG(2026, 1122))
	data := clustered(r, n, dim, 500, 0.35)
	for _, code := range []index.Code{index.Float32, index.SQ8, index.SQ8Residual} {
		b.Run("code="+code.String(), func(b *testing.B) {
			for range b.N {
				x, _ := index.New(index.Options{Dim: dim, Space: index.Cosine, Seed: 1, Workers: 1, Code: code})
				if err := x.InsertBatch(context.Background(), seqIDs(0, n), data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
