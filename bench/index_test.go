package bench_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/index"
)

func smallSpec() bench.MixtureSpec {
	s := bench.EasySpec(600, 20, 32)
	s.Clusters = 10
	return s
}

func TestMixtureDeterministicAndUnit(t *testing.T) {
	s := smallSpec()
	b1, q1 := s.Generate()
	b2, q2 := s.Generate()
	if !slices.Equal(b1, b2) || !slices.Equal(q1, q2) {
		t.Fatal("same spec generated different data")
	}
	if got, want := len(b1), s.N*s.Dim; got != want {
		t.Fatalf("len(base) = %d, want %d", got, want)
	}
	for i := 0; i < s.N; i++ {
		var n float64
		for _, v := range b1[i*s.Dim : (i+1)*s.Dim] {
			n += float64(v) * float64(v)
		}
		if math.Abs(n-1) > 1e-4 {
			t.Fatalf("row %d has squared norm %v, want 1", i, n)
		}
	}
	s.Seed++
	b3, _ := s.Generate()
	if slices.Equal(b1, b3) {
		t.Fatal("different seeds generated the same data")
	}
}

func TestVecsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := smallSpec()
	base, _ := s.Generate()
	p := filepath.Join(dir, "b.fvecs")
	if err := bench.WriteFvecs(p, base, s.Dim); err != nil {
		t.Fatal(err)
	}
	got, dim, err := bench.ReadFvecs(p)
	if err != nil || dim != s.Dim || !slices.Equal(got, base) {
		t.Fatalf("ReadFvecs: dim %d err %v equal %v", dim, err, slices.Equal(got, base))
	}
	rows := [][]uint32{{1, 2, 3}, {}, {7}}
	p = filepath.Join(dir, "r.ivecs")
	if err := bench.WriteIvecs(p, rows); err != nil {
		t.Fatal(err)
	}
	back, err := bench.ReadIvecs(p)
	if err != nil || len(back) != 3 || !slices.Equal(back[0], rows[0]) || len(back[1]) != 0 || !slices.Equal(back[2], rows[2]) {
		t.Fatalf("ReadIvecs = %v, %v", back, err)
	}
	if err := os.WriteFile(p, []byte{200, 0, 0, 0, 1}, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bench.ReadIvecs(p); err == nil {
		t.Fatal("truncated ivecs: want error")
	}
}

func TestGroundTruthMatchesNaive(t *testing.T) {
	s := smallSpec()
	base, queries := s.Generate()
	allow := bench.Subset(s.N, 0.1, 3)
	if got, want := len(allow), 60; got != want {
		t.Fatalf("len(Subset) = %d, want %d", got, want)
	}
	for _, a := range [][]uint32{nil, allow} {
		gt := bench.GroundTruth(base, queries, s.Dim, 10, a)
		for qi := range s.Queries {
			q := queries[qi*s.Dim : (qi+1)*s.Dim]
			cand := a
			if cand == nil {
				for i := range s.N {
					cand = append(cand, uint32(i))
				}
			}
			type hit struct {
				id uint32
				d  float64
			}
			var hs []hit
			for _, id := range cand {
				var d float64
				for j, v := range base[int(id)*s.Dim : (int(id)+1)*s.Dim] {
					x := float64(q[j] - v)
					d += x * x
				}
				hs = append(hs, hit{id, d})
			}
			slices.SortFunc(hs, func(x, y hit) int {
				if x.d < y.d {
					return -1
				}
				if x.d > y.d {
					return 1
				}
				return 0
			})
			var want []uint32
			for _, h := range hs[:10] {
				want = append(want, h.id)
			}
			if r := bench.Recall(gt[qi], want); r < 0.9 { // float32 vs float64 ties may swap the 10th
				t.Fatalf("query %d: recall of GroundTruth vs naive = %v", qi, r)
			}
		}
	}
}

func TestLatencyAtRecall(t *testing.T) {
	c := []bench.IndexRow{{Ef: 20, Recall: 0.9, P50us: 200}, {Ef: 10, Recall: 0.8, P50us: 100}, {Ef: 40, Recall: 1, P50us: 400}}
	for _, tc := range []struct {
		target, want float64
		ok           bool
	}{{0.7, 100, true}, {0.85, 150, true}, {0.95, 300, true}, {1, 400, true}, {1.01, 0, false}} {
		got, ok := bench.LatencyAtRecall(c, tc.target, false)
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("LatencyAtRecall(%v) = %v, %v; want %v, %v", tc.target, got, ok, tc.want, tc.ok)
		}
	}
}

func TestIndexMarkdownSmoke(t *testing.T) {
	rows := []bench.IndexRow{
		{Peer: "cairn", Dataset: "easy", N: 10, Kind: "query", Ef: 10, Recall: 0.99, P50us: 50, P99us: 90},
		{Peer: "hnswlib-native", Dataset: "easy", N: 10, Kind: "query", Ef: 10, Recall: 0.99, P50us: 100, P99us: 180},
	}
	md := bench.IndexMarkdown(rows)
	if want := "**0.50**"; !strings.Contains(md, want) {
		t.Fatalf("markdown lacks %q:\n%s", want, md)
	}
}

// BenchmarkIndexSearch measures cairn's single-threaded search on the easy
// and hard data sets (CAIRN_BENCH_INDEX_N vectors, default 20000) and reports
// recall@10 next to ns/op; use it for profiles:
//
//	go test ./bench -run '^$' -bench IndexSearch -cpuprofile cpu.out
func BenchmarkIndexSearch(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("CAIRN_BENCH_INDEX_N")); err == nil && v > 0 {
		n = v
	}
	for _, spec := range []bench.MixtureSpec{bench.EasySpec(n, 200, 384), bench.HardSpec(n, 200, 384)} {
		base, queries := spec.Generate()
		gt := bench.GroundTruth(base, queries, spec.Dim, 10, nil)
		for _, code := range []index.Code{index.Float32, index.SQ8} {
			p, _, _, err := bench.BuildCairn(context.Background(), base, spec.Dim, 16, 200, 2, 1, index.L2, code)
			if err != nil {
				b.Fatal(err)
			}
			benchIndexQueries(b, p, spec, code, queries, gt)
		}
	}
}

func benchIndexQueries(b *testing.B, p *bench.CairnPeer, spec bench.MixtureSpec, code index.Code, queries []float32, gt [][]uint32) {
	for _, ef := range []int{40, 100} {
		b.Run(fmt.Sprintf("%s/code=%v/n=%d/dim=384/ef=%d", spec.Name, code, spec.N, ef), func(b *testing.B) {
			b.ReportAllocs()
			var recall float64
			i := 0
			for b.Loop() {
				qi := i % spec.Queries
				got := p.Query(queries[qi*spec.Dim:(qi+1)*spec.Dim], 10, ef)
				recall += bench.Recall(got, gt[qi])
				i++
			}
			b.ReportMetric(recall/float64(i), "recall@10")
		})
	}
}

// TestRunIndexBenchCodes runs both cairn codes through the harness on a
// small data set and checks each reports sensible rows.
func TestRunIndexBenchCodes(t *testing.T) {
	cfg := bench.IndexConfig{CacheDir: t.TempDir(), N: 800, NQ: 20, Dim: 32, Efs: []int{40}, Reps: 1,
		Datasets: []string{"easy"}, Peers: []string{"cairn", "cairn-sq8"}, Threads: []int{2}, Sels: []float64{0.5}}
	got := map[string]bench.IndexRow{}
	err := bench.RunIndexBench(context.Background(), cfg, func(r bench.IndexRow) { got[r.Peer+"/"+r.Kind] = r })
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"cairn/build", "cairn-sq8/build", "cairn/query", "cairn-sq8/query", "cairn-sq8+rerank/query", "cairn/filter", "cairn-sq8/filter"} {
		r, ok := got[key]
		if !ok {
			t.Errorf("no %s row", key)
			continue
		}
		if r.Kind != "build" && r.Recall < 0.9 {
			t.Errorf("%s: recall %.3f", key, r.Recall)
		}
	}
}

// TestFootprint saves a cairn index and a whole vecstore of the same small
// data set and loads each as the footprint process does: the rows name the
// saved bytes and the count, and the vecstore's queries find the exact
// neighbours.
func TestFootprint(t *testing.T) {
	ctx := context.Background()
	s := smallSpec()
	base, queries := s.Generate()
	gt := bench.GroundTruth(base, queries, s.Dim, 10, nil)
	dir := t.TempDir()
	var rows []bench.IndexRow
	emit := func(r bench.IndexRow) { rows = append(rows, r) }

	p, _, _, err := bench.BuildCairn(ctx, base, s.Dim, 16, 100, 2, 1, index.Cosine, index.SQ8)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "cairn-sq8.index")
	if err := bench.SaveCairnIndex(p, file); err != nil {
		t.Fatal(err)
	}
	err = bench.MeasureFootprint(ctx, bench.FootprintRequest{Kind: "cairn", Path: file, Peer: "cairn-sq8", Dataset: s.Name,
		Query: queries[:s.Dim]}, emit)
	if err != nil {
		t.Fatal(err)
	}

	store := filepath.Join(dir, "store")
	if _, _, err := bench.BuildVecstore(ctx, store, base, s.Dim, 16, 100, 2, index.Cosine, "float32"); err != nil {
		t.Fatal(err)
	}
	err = bench.MeasureFootprint(ctx, bench.FootprintRequest{Kind: "vecstore", Path: store, Peer: "vecstore", Dataset: s.Name,
		Query: queries[:s.Dim], Queries: queries, GT: gt, Reps: 1}, emit)
	if err != nil {
		t.Fatal(err)
	}

	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("got %d rows, want 2 footprints and 1 vecstore query: %+v", len(rows), rows)
	}
	for _, r := range rows[:2] {
		if r.Kind != "footprint" || r.N != s.N || r.RSSB <= 0 || r.DiskB <= 0 {
			t.Errorf("footprint row %+v: want kind footprint, n %d, RSS and disk bytes", r, s.N)
		}
	}
	if rows[0].DiskB != fi.Size() {
		t.Errorf("cairn footprint disk bytes %d, file has %d", rows[0].DiskB, fi.Size())
	}
	if q := rows[2]; q.Kind != "query" || q.Peer != "vecstore" || q.Recall < 0.95 {
		t.Errorf("vecstore query row %+v: want recall >= 0.95", q)
	}
	if md := bench.IndexMarkdown(rows); !strings.Contains(md, "### Footprint") || !strings.Contains(md, "| easy | 600 | vecstore |") {
		t.Errorf("markdown lacks the footprint table:\n%s", md)
	}
}
