// Command indexbench runs cairn's index/ (float32 and SQ8, alone and inside
// a whole vecstore) side by side with hnswlib (native C++ and Debian's Python
// module), faiss (IndexHNSWFlat and IndexHNSWSQ 8-bit), coder/hnsw v0.6.1 and
// an exact scan on the same seeded data, and prints a markdown table of
// ratios, including each peer's bytes on disk and resident memory after a
// fresh load. bench/peers/run.sh checks the prerequisites and calls it.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/index"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "indexbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "footprint" {
		return runFootprint(ctx, args[1:])
	}
	fs := flag.NewFlagSet("indexbench", flag.ContinueOnError)
	cache, _ := os.UserCacheDir()
	var (
		cacheDir  = fs.String("cache", filepath.Join(cache, "cairn-bench", "index"), "directory for generated data and results")
		n         = fs.Int("n", 100_000, "base vectors")
		nq        = fs.Int("nq", 1000, "held-out queries")
		dim       = fs.Int("dim", 384, "dimension")
		m         = fs.Int("m", 16, "HNSW M")
		efc       = fs.Int("efc", 200, "HNSW ef_construction")
		efs       = fs.String("efs", "10,20,40,80,100,200,400", "ef_search curve")
		reps      = fs.Int("reps", 3, "query passes (medians reported)")
		datasets  = fs.String("datasets", "easy,hard", "data sets")
		peers     = fs.String("peers", "cairn,hnswlib-native,hnswlib-py,faiss,coder,exact", "peers, run in this order: cairn, cairn-sq8, cairn-sq8r (residual code), vecstore, vecstore-sq8 (the whole store), hnswlib-native, hnswlib-py, faiss, faiss-sq8 (IndexHNSWSQ 8-bit), coder, exact")
		threads   = fs.String("threads", "1,2", "build thread counts (first data set; later ones use the first)")
		sels      = fs.String("sels", "0.5,0.1,0.01,0.001", "filter selectivities (fraction of ids allowed)")
		filterEfs = fs.String("filter-efs", "100", "ef for filtered searches")
		python    = fs.String("python", "/usr/bin/python3", "python with numpy, hnswlib and faiss")
		peersDir  = fs.String("peers-dir", "bench/peers", "directory holding pypeer.py")
		native    = fs.String("native", "", "compiled hnswlib_native (bench/peers/run.sh builds it)")
		mem       = fs.Int("mem", 0, "instead of the comparison, build the peers at this n (e.g. 1000000) on the easy data and report memory (filters, coder and exact are not run)")
		footprint = fs.Bool("footprint", true, "save each peer's index and report its bytes on disk and the RSS of a fresh process that loads it and answers one query")
		memW      = fs.Int("mem-workers", 2, "build threads for -mem")
		decompose = fs.Bool("decompose", false, "with -mem: also query cairn-sq8 with a float32 re-rank of its candidates, and cairn's float32 graph recoded to SQ8 (with and without the re-rank)")
		space     = fs.String("space", "l2", "space of cairn's index and vecstore peers: l2 or cosine (the engine's message collections); the other peers build l2, and the unit-norm data has the same neighbours in both")
		out       = fs.String("out", "", "results file (JSON lines; default CACHE/results-TIME.jsonl)")
		table     = fs.String("table", "", "only render the markdown table of these comma-separated results files")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *table != "" {
		var rows []bench.IndexRow
		for _, p := range strings.Split(*table, ",") {
			rs, err := readRows(p)
			if err != nil {
				return err
			}
			rows = append(rows, rs...)
		}
		fmt.Print(bench.IndexMarkdown(rows))
		return nil
	}
	sp, err := index.ParseSpace(*space)
	if err != nil || sp == index.IP {
		return fmt.Errorf("-space: %q is not l2 or cosine", *space)
	}
	cfg := bench.IndexConfig{CacheDir: *cacheDir, N: *n, NQ: *nq, Dim: *dim, M: *m, Efc: *efc, Reps: *reps,
		Datasets: split(*datasets), Peers: split(*peers), Python: *python, PeersDir: *peersDir, NativeBin: *native,
		Space: sp, Decompose: *decompose, Log: os.Stderr}
	if *footprint {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		cfg.Self, cfg.FootprintDir = self, filepath.Join(*cacheDir, "footprint")
	}
	if cfg.Efs, err = ints(*efs); err != nil {
		return err
	}
	if cfg.Threads, err = ints(*threads); err != nil {
		return err
	}
	if cfg.FilterEfs, err = ints(*filterEfs); err != nil {
		return err
	}
	cfg.Sels = []float64{}
	for _, s := range split(*sels) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("-sels: %w", err)
		}
		cfg.Sels = append(cfg.Sels, f)
	}
	if *out == "" {
		*out = filepath.Join(*cacheDir, "results-"+time.Now().UTC().Format("20060102T150405")+".jsonl")
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	defer f.Close()
	var rows []bench.IndexRow
	emit := func(r bench.IndexRow) {
		if strings.HasPrefix(r.Peer, "cairn") || strings.HasPrefix(r.Peer, "vecstore") {
			r.Space = sp.String()
		}
		rows = append(rows, r)
		line, _ := json.Marshal(r)
		f.Write(append(line, '\n'))
		fmt.Fprintf(os.Stderr, "  %s\n", line)
	}
	if *mem > 0 {
		err = bench.RunIndexMemory(ctx, cfg, *mem, *memW, emit)
	} else {
		err = bench.RunIndexBench(ctx, cfg, emit)
	}
	fmt.Fprintf(os.Stderr, "results: %s\n", *out)
	fmt.Print(bench.IndexMarkdown(rows))
	return err
}

func readRows(path string) ([]bench.IndexRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []bench.IndexRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r bench.IndexRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		rows = append(rows, r)
	}
	return rows, sc.Err()
}

func split(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func ints(s string) ([]int, error) {
	var out []int
	for _, x := range split(s) {
		v, err := strconv.Atoi(x)
		if err != nil {
			return nil, fmt.Errorf("bad integer list %q: %w", s, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// runFootprint is the child process of a footprint: it loads a saved cairn
// index or vecstore and prints its rows as JSON lines.
func runFootprint(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("indexbench footprint", flag.ContinueOnError)
	var (
		kind    = fs.String("kind", "cairn", "cairn (a MarshalBinary file) or vecstore (a store directory)")
		path    = fs.String("path", "", "the saved index")
		query   = fs.String("query", "", "fvecs of queries (the first one is the footprint's query)")
		gt      = fs.String("gt", "", "ivecs of the queries' exact neighbours: also measure them (vecstore)")
		reps    = fs.Int("reps", 1, "query passes")
		peer    = fs.String("peer", "", "peer name of the rows")
		dataset = fs.String("dataset", "", "data set name of the rows")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	qs, dim, err := bench.ReadFvecs(*query)
	if err != nil {
		return err
	}
	req := bench.FootprintRequest{Kind: *kind, Path: *path, Peer: *peer, Dataset: *dataset, Query: qs[:dim], Reps: *reps}
	if *gt != "" {
		if req.GT, err = bench.ReadIvecs(*gt); err != nil {
			return err
		}
		req.Queries = qs
	}
	return bench.MeasureFootprint(ctx, req, func(r bench.IndexRow) {
		line, _ := json.Marshal(r)
		fmt.Println(string(line))
	})
}
