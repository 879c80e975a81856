package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/cairn-dev/cairn/index"
)

// IndexConfig drives RunIndexBench. Zero fields take the issue-3 defaults.
type IndexConfig struct {
	CacheDir  string    // data files shared with the external peers
	N, NQ     int       // base vectors, held-out queries
	Dim       int       // dimension
	M, Efc, K int       // HNSW parameters, neighbours per query
	Efs       []int     // ef_search curve
	Reps      int       // query passes; medians are reported
	Datasets  []string  // easy, hard
	Peers     []string  // cairn, cairn-sq8, vecstore, vecstore-sq8, hnswlib-native, hnswlib-py, faiss, faiss-sq8, coder, exact
	Threads   []int     // build thread counts (the curve uses the first build); hard uses the first only
	Sels      []float64 // filter selectivities (fraction allowed), run on every data set
	FilterEfs []int     // ef for filtered searches
	Python    string    // Debian python with numpy, hnswlib, faiss
	PeersDir  string    // directory holding pypeer.py
	NativeBin string    // compiled hnswlib_native
	// Footprints: every peer saves its index under FootprintDir and a fresh
	// process loads it (cairn's and vecstore's through Self, indexbench's
	// footprint subcommand); empty FootprintDir or Self skips them.
	FootprintDir string
	Self         string
	Seed         int64
	// Space of cairn's index and vecstore peers (the zero value is cosine,
	// what the engine's message collections use; the other peers always
	// build L2). The data has unit norm, so the exact neighbours are the
	// same in both.
	Space index.Space
	// Decompose (RunIndexMemory): the SQ8 index is also queried with an
	// exact float32 re-rank of its ef candidates, and the float32 index,
	// once measured, is recoded to SQ8 and queried again (float32's graph,
	// SQ8's distances), which separates what SQ8 loses in the graph it
	// builds from what it loses in the search.
	Decompose bool
	Log       io.Writer
}

func (c *IndexConfig) defaults() {
	if c.N == 0 {
		c.N = 100_000
	}
	if c.NQ == 0 {
		c.NQ = 1000
	}
	if c.Dim == 0 {
		c.Dim = 384
	}
	if c.M == 0 {
		c.M = 16
	}
	if c.Efc == 0 {
		c.Efc = 200
	}
	if c.K == 0 {
		c.K = 10
	}
	if len(c.Efs) == 0 {
		c.Efs = []int{10, 20, 40, 80, 100, 200, 400}
	}
	if c.Reps == 0 {
		c.Reps = 3
	}
	if len(c.Datasets) == 0 {
		c.Datasets = []string{"easy", "hard"}
	}
	if len(c.Peers) == 0 {
		c.Peers = []string{"cairn", "hnswlib-native", "hnswlib-py", "faiss", "coder", "exact"}
	}
	if len(c.Threads) == 0 {
		c.Threads = []int{1, 2}
	}
	if c.Sels == nil {
		c.Sels = []float64{0.5, 0.1, 0.01, 0.001}
	}
	if len(c.FilterEfs) == 0 {
		c.FilterEfs = []int{100}
	}
	if c.Python == "" {
		c.Python = "/usr/bin/python3"
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

// FilterSet is one selectivity: the allowed ids and the exact top-k among them.
type FilterSet struct {
	Sel       float64
	Allow     []uint32
	Bitmap    *roaring.Bitmap
	GT        [][]uint32
	AllowPath string
	GTPath    string
}

// IndexDataset is a generated data set with its cached files.
type IndexDataset struct {
	Spec                        MixtureSpec
	Dir                         string
	Base, Queries               []float32
	GT                          [][]uint32
	BasePath, QueryPath, GTPath string
	Filters                     []FilterSet
}

// PrepareIndexDataset loads the data set from dir/<spec key>/ or generates it
// (vectors, exact top-k, filters and their exact top-k) and writes it there.
func PrepareIndexDataset(spec MixtureSpec, cacheDir string, k int, sels []float64, log io.Writer) (*IndexDataset, error) {
	d := &IndexDataset{Spec: spec, Dir: filepath.Join(cacheDir, spec.Key())}
	d.BasePath = filepath.Join(d.Dir, "base.fvecs")
	d.QueryPath = filepath.Join(d.Dir, "query.fvecs")
	d.GTPath = filepath.Join(d.Dir, fmt.Sprintf("gt-k%d.ivecs", k))
	dim := spec.Dim
	if fileExists(d.BasePath) && fileExists(d.QueryPath) {
		var err error
		t0 := time.Now()
		if d.Base, _, err = ReadFvecs(d.BasePath); err != nil {
			return nil, err
		}
		if d.Queries, _, err = ReadFvecs(d.QueryPath); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "%s: loaded %s in %v\n", spec.Name, d.Dir, time.Since(t0).Round(time.Millisecond))
	} else {
		t0 := time.Now()
		d.Base, d.Queries = spec.Generate()
		if err := WriteFvecs(d.BasePath, d.Base, dim); err != nil {
			return nil, err
		}
		if err := WriteFvecs(d.QueryPath, d.Queries, dim); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "%s: generated %d+%d vectors in %v\n", spec.Name, spec.N, spec.Queries, time.Since(t0).Round(time.Millisecond))
	}
	gt, err := cachedGT(d.GTPath, func() [][]uint32 { return GroundTruth(d.Base, d.Queries, dim, k, nil) }, log)
	if err != nil {
		return nil, err
	}
	d.GT = gt
	for _, sel := range sels {
		fs := FilterSet{Sel: sel,
			AllowPath: filepath.Join(d.Dir, fmt.Sprintf("allow-%g.ivecs", sel)),
			GTPath:    filepath.Join(d.Dir, fmt.Sprintf("gt-k%d-allow-%g.ivecs", k, sel))}
		fs.Allow = Subset(spec.N, sel, spec.Seed+7)
		if !fileExists(fs.AllowPath) {
			if err := WriteIvecs(fs.AllowPath, [][]uint32{fs.Allow}); err != nil {
				return nil, err
			}
		}
		fs.Bitmap = roaring.BitmapOf(fs.Allow...)
		fs.GT, err = cachedGT(fs.GTPath, func() [][]uint32 { return GroundTruth(d.Base, d.Queries, dim, k, fs.Allow) }, log)
		if err != nil {
			return nil, err
		}
		d.Filters = append(d.Filters, fs)
	}
	return d, nil
}

func cachedGT(path string, compute func() [][]uint32, log io.Writer) ([][]uint32, error) {
	if fileExists(path) {
		return ReadIvecs(path)
	}
	t0 := time.Now()
	gt := compute()
	fmt.Fprintf(log, "ground truth %s in %v\n", filepath.Base(path), time.Since(t0).Round(time.Millisecond))
	return gt, WriteIvecs(path, gt)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// RunIndexBench runs every configured peer on every data set, back to back in
// this process and its children, and calls emit for each measurement.
func RunIndexBench(ctx context.Context, cfg IndexConfig, emit func(IndexRow)) error {
	cfg.defaults()
	log := cfg.Log
	for di, name := range cfg.Datasets {
		var spec MixtureSpec
		switch name {
		case "easy":
			spec = EasySpec(cfg.N, cfg.NQ, cfg.Dim)
		case "hard":
			spec = HardSpec(cfg.N, cfg.NQ, cfg.Dim)
		default:
			return fmt.Errorf("bench: unknown data set %q", name)
		}
		ds, err := PrepareIndexDataset(spec, cfg.CacheDir, cfg.K, cfg.Sels, log)
		if err != nil {
			return err
		}
		if err := cfg.makeFootprintDir(); err != nil {
			return err
		}
		threads := cfg.Threads
		if di > 0 {
			threads = threads[:1]
		}
		for _, peer := range cfg.Peers {
			if err := ctx.Err(); err != nil {
				return err
			}
			fmt.Fprintf(log, "%s %s: %s\n", time.Now().Format("15:04:05"), name, peer)
			if err := runPeer(ctx, cfg, ds, peer, threads, emit); err != nil {
				return err
			}
		}
	}
	return nil
}

// runPeer builds one peer on ds with each thread count, measures its
// queries (and filters, where the peer has them) and, when configured, its
// footprint.
func runPeer(ctx context.Context, cfg IndexConfig, ds *IndexDataset, peer string, threads []int, emit func(IndexRow)) error {
	name := ds.Spec.Name
	log := cfg.Log
	switch peer {
	case "cairn", "cairn-sq8", "cairn-sq8r":
		return runCairn(ctx, cfg, ds, peer, threads, emit)
	case "vecstore", "vecstore-sq8":
		return runVecstore(ctx, cfg, ds, peer, threads[0], emit)
	case "exact":
		runExact(cfg, ds, emit)
	case "coder":
		runCoder(cfg, ds, emit)
	case "hnswlib-native":
		save := cfg.footprintPath(peer, ds)
		args := []string{name, ds.BasePath, ds.QueryPath, ds.GTPath, strconv.Itoa(cfg.M), strconv.Itoa(cfg.Efc),
			joinInts(cfg.Efs), joinInts(threads), strconv.Itoa(cfg.Reps), strconv.Itoa(cfg.K)}
		if save != "" {
			args = append(args, save)
		}
		if err := runExternal(ctx, log, emit, cfg.NativeBin, args...); err != nil {
			return err
		}
		if save != "" {
			defer os.Remove(save)
			return runExternal(ctx, log, emit, cfg.NativeBin, "load", save, ds.QueryPath, name)
		}
	case "hnswlib-py", "faiss", "faiss-sq8":
		lib := map[string]string{"hnswlib-py": "hnswlib", "faiss": "faiss", "faiss-sq8": "faiss-sq8"}[peer]
		script := filepath.Join(cfg.PeersDir, "pypeer.py")
		args := []string{script, "--lib", lib, "--dataset", name,
			"--base", ds.BasePath, "--query", ds.QueryPath, "--gt", ds.GTPath,
			"--M", strconv.Itoa(cfg.M), "--efc", strconv.Itoa(cfg.Efc), "--efs", joinInts(cfg.Efs),
			"--threads", joinInts(threads), "--reps", strconv.Itoa(cfg.Reps), "--k", strconv.Itoa(cfg.K),
			"--filter-efs", joinInts(cfg.FilterEfs)}
		if lib != "hnswlib" && len(ds.Filters) > 0 {
			var fl []string
			for _, f := range ds.Filters {
				fl = append(fl, fmt.Sprintf("%g:%s:%s", f.Sel, f.AllowPath, f.GTPath))
			}
			args = append(args, "--filters", strings.Join(fl, ","))
		}
		save := cfg.footprintPath(peer, ds)
		if save != "" {
			args = append(args, "--save", save)
		}
		if err := runExternal(ctx, log, emit, cfg.Python, args...); err != nil {
			return err
		}
		if save != "" {
			defer os.Remove(save)
			return runExternal(ctx, log, emit, cfg.Python, script, "--lib", lib, "--load", save,
				"--query", ds.QueryPath, "--dataset", name)
		}
	default:
		return fmt.Errorf("bench: unknown peer %q", peer)
	}
	return nil
}

// footprintPath is where peer saves its index for its footprint ("" when
// footprints are off).
func (c *IndexConfig) footprintPath(peer string, ds *IndexDataset) string {
	if c.FootprintDir == "" || c.Self == "" {
		return ""
	}
	return filepath.Join(c.FootprintDir, fmt.Sprintf("%s-%s-%d.index", peer, ds.Spec.Name, ds.Spec.N))
}

// cairnFootprint saves p and has a fresh indexbench process load it.
func cairnFootprint(ctx context.Context, cfg IndexConfig, ds *IndexDataset, peer string, p *CairnPeer, emit func(IndexRow)) error {
	path := cfg.footprintPath(peer, ds)
	if path == "" {
		return nil
	}
	defer os.Remove(path)
	if err := SaveCairnIndex(p, path); err != nil {
		return err
	}
	return runExternal(ctx, cfg.Log, emit, cfg.Self, "footprint", "-kind", "cairn", "-path", path,
		"-query", ds.QueryPath, "-peer", peer, "-dataset", ds.Spec.Name)
}

// runVecstore writes ds into a whole vecstore (records, vectors, graph) with
// workers, then a fresh indexbench process opens it, answers one query
// (footprint) and measures the queries through vecstore.Query.
func runVecstore(ctx context.Context, cfg IndexConfig, ds *IndexDataset, peer string, workers int, emit func(IndexRow)) error {
	root := cfg.FootprintDir
	if root == "" {
		root = cfg.CacheDir
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(root, peer+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	wall, cpu, err := BuildVecstore(ctx, dir, ds.Base, ds.Spec.Dim, cfg.M, cfg.Efc, workers, cfg.Space, vecstorePeers[peer])
	if err != nil {
		return err
	}
	emit(IndexRow{Peer: peer, Dataset: ds.Spec.Name, N: ds.Spec.N, Kind: "build", Threads: workers, BuildS: wall.Seconds(), BuildC: cpu.Seconds(),
		Note: "vecstore.Add in batches of 1,000 (records, vectors, graph, snapshots)"})
	if cfg.Self == "" {
		return nil
	}
	return runExternal(ctx, cfg.Log, emit, cfg.Self, "footprint", "-kind", "vecstore", "-path", dir,
		"-query", ds.QueryPath, "-gt", ds.GTPath, "-reps", strconv.Itoa(cfg.Reps), "-peer", peer, "-dataset", ds.Spec.Name)
}

func runCairn(ctx context.Context, cfg IndexConfig, ds *IndexDataset, peer string, threads []int, emit func(IndexRow)) error {
	n, dim := ds.Spec.N, ds.Spec.Dim
	var keep *CairnPeer
	for _, t := range threads {
		p, d, c, err := BuildCairn(ctx, ds.Base, dim, cfg.M, cfg.Efc, t, cfg.Seed, cfg.Space, cairnPeers[peer])
		if err != nil {
			return err
		}
		emit(IndexRow{Peer: peer, Dataset: ds.Spec.Name, N: n, Kind: "build", Threads: t, BuildS: d.Seconds(), BuildC: c.Seconds()})
		if keep == nil {
			keep = p
		}
		runtime.GC()
	}
	if keep == nil {
		return nil
	}
	for _, ef := range cfg.Efs {
		s := MeasureQueries(keep.Query, ds.Queries, dim, cfg.K, ef, ds.GT, cfg.Reps)
		emit(queryRow(peer, ds, "query", ef, 0, s))
		if cairnPeers[peer] == index.SQ8 {
			s := MeasureQueries(keep.QueryReranked(ds.Base, dim), ds.Queries, dim, cfg.K, ef, ds.GT, cfg.Reps)
			emit(queryRow(peer+"+rerank", ds, "query", ef, 0, s))
		}
	}
	for _, f := range ds.Filters {
		for _, ef := range cfg.FilterEfs {
			bm := f.Bitmap
			q := func(q []float32, k, ef int) []uint32 { return keep.QueryAllowed(q, k, ef, bm) }
			s := MeasureQueries(q, ds.Queries, dim, cfg.K, ef, f.GT, cfg.Reps)
			emit(queryRow(peer, ds, "filter", ef, f.Sel, s))
		}
	}
	return cairnFootprint(ctx, cfg, ds, peer, keep, emit)
}

func runExact(cfg IndexConfig, ds *IndexDataset, emit func(IndexRow)) {
	e := ExactPeer{Base: ds.Base, Dim: ds.Spec.Dim}
	s := MeasureQueries(e.Query, ds.Queries, ds.Spec.Dim, cfg.K, 0, ds.GT, 1)
	emit(queryRow("exact", ds, "query", 0, 0, s))
	for _, f := range ds.Filters {
		allow := f.Allow
		q := func(q []float32, k, _ int) []uint32 { return e.QueryAllowed(q, k, allow) }
		s := MeasureQueries(q, ds.Queries, ds.Spec.Dim, cfg.K, 0, f.GT, cfg.Reps)
		emit(queryRow("exact", ds, "filter", 0, f.Sel, s))
	}
}

func runCoder(cfg IndexConfig, ds *IndexDataset, emit func(IndexRow)) {
	p, d, c := BuildCoder(ds.Base, ds.Spec.Dim, cfg.M, cfg.Efc, cfg.Seed)
	emit(IndexRow{Peer: "coder-hnsw", Dataset: ds.Spec.Name, N: ds.Spec.N, Kind: "build", Threads: 1, BuildS: d.Seconds(), BuildC: c.Seconds(),
		Note: "EfSearch=efc during build (no construction ef)"})
	for _, ef := range cfg.Efs {
		s := MeasureQueries(p.Query, ds.Queries, ds.Spec.Dim, cfg.K, ef, ds.GT, cfg.Reps)
		emit(queryRow("coder-hnsw", ds, "query", ef, 0, s))
	}
}

func queryRow(peer string, ds *IndexDataset, kind string, ef int, sel float64, s QueryStats) IndexRow {
	return IndexRow{Peer: peer, Dataset: ds.Spec.Name, N: ds.Spec.N, Kind: kind, Ef: ef, Sel: sel,
		Recall: s.Recall, P50us: s.P50us, P99us: s.P99us, MeanUs: s.MeanUs, CPUP50: s.CPUP50, CPUP99: s.CPUP99}
}

// runExternal runs a peer process and forwards its JSON lines to emit; other
// output goes to log.
func runExternal(ctx context.Context, log io.Writer, emit func(IndexRow), bin string, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = log
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("bench: start %s: %w", bin, err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Bytes()
		var r IndexRow
		if len(line) > 0 && line[0] == '{' && json.Unmarshal(line, &r) == nil {
			emit(r)
			continue
		}
		fmt.Fprintf(log, "%s\n", line)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("bench: %s %s: %w", filepath.Base(bin), strings.Join(args[:min(3, len(args))], " "), err)
	}
	return nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// RunIndexMemory builds each peer at n on the easy data with workers
// threads: cairn's indexes report the Go heap they added against
// RawHNSWBytes (and Stats.Bytes), hnswlib-native its RSS growth; every peer
// then reports recall and latency at each ef and, when configured, its
// footprint (bytes on disk and RSS of a process that loaded it). The
// vecstore peers measure the whole store cairn keeps (records, vectors,
// graph).
func RunIndexMemory(ctx context.Context, cfg IndexConfig, n, workers int, emit func(IndexRow)) error {
	cfg.defaults()
	spec := EasySpec(n, cfg.NQ, cfg.Dim)
	ds, err := PrepareIndexDataset(spec, cfg.CacheDir, cfg.K, nil, cfg.Log)
	if err != nil {
		return err
	}
	if err := cfg.makeFootprintDir(); err != nil {
		return err
	}
	raw := RawHNSWBytes(n, cfg.Dim, cfg.M)
	for _, peer := range cfg.Peers {
		if err := ctx.Err(); err != nil {
			return err
		}
		fmt.Fprintf(cfg.Log, "%s easy n=%d: %s\n", time.Now().Format("15:04:05"), n, peer)
		if code, ok := cairnPeers[peer]; ok {
			if err := cairnMemory(ctx, cfg, ds, peer, code, workers, raw, emit); err != nil {
				return err
			}
			continue
		}
		if peer == "hnswlib-native" && cfg.NativeBin == "" {
			fmt.Fprintln(cfg.Log, "  skipped: no -native binary (bench/peers/run.sh builds it)")
			continue
		}
		err := runPeer(ctx, cfg, ds, peer, []int{workers}, func(r IndexRow) {
			if peer == "hnswlib-native" && r.Kind == "build" {
				r.Kind, r.RawB = "memory", raw
			}
			emit(r)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *IndexConfig) makeFootprintDir() error {
	if c.FootprintDir == "" {
		return nil
	}
	return os.MkdirAll(c.FootprintDir, 0o755)
}

// cairnMemory builds one cairn index for RunIndexMemory and reports the
// live heap it added, its own count, and its queries.
func cairnMemory(ctx context.Context, cfg IndexConfig, ds *IndexDataset, peer string, code index.Code, workers int, raw int64, emit func(IndexRow)) error {
	n := ds.Spec.N
	var ms runtime.MemStats
	// Twice: an index built before is still reachable through its
	// sync.Pool until the second collection after its last use.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	p, d, c, err := BuildCairn(ctx, ds.Base, cfg.Dim, cfg.M, cfg.Efc, workers, cfg.Seed, cfg.Space, code)
	if err != nil {
		return err
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	emit(IndexRow{Peer: peer, Dataset: "easy", N: n, Kind: "memory", Threads: workers, BuildS: d.Seconds(), BuildC: c.Seconds(),
		Bytes: int64(ms.HeapAlloc) - int64(before), RawB: raw, Note: "bytes = live Go heap growth after build and GC"})
	emit(IndexRow{Peer: peer + " (Stats.Bytes)", Dataset: "easy", N: n, Kind: "memory", Threads: workers, BuildS: d.Seconds(), BuildC: c.Seconds(),
		Bytes: int64(p.Idx.Stats().Bytes), RawB: raw, Note: "index's own count of vectors, lists and slot metadata"})
	for _, ef := range cfg.Efs {
		s := MeasureQueries(p.Query, ds.Queries, cfg.Dim, cfg.K, ef, ds.GT, cfg.Reps)
		emit(queryRow(peer, ds, "query", ef, 0, s))
		if code != index.Float32 && cfg.Decompose {
			s := MeasureQueries(p.QueryReranked(ds.Base, cfg.Dim), ds.Queries, cfg.Dim, cfg.K, ef, ds.GT, cfg.Reps)
			emit(queryRow(peer+"+rerank", ds, "query", ef, 0, s))
		}
	}
	if err := cairnFootprint(ctx, cfg, ds, peer, p, emit); err != nil {
		return err
	}
	if code != index.Float32 || !cfg.Decompose {
		return nil
	}
	// The float32 graph searched with SQ8 codes: what the code loses at
	// search time alone, the graph being float32's.
	if err := p.Idx.Recode(index.SQ8); err != nil {
		return err
	}
	for _, ef := range cfg.Efs {
		s := MeasureQueries(p.Query, ds.Queries, cfg.Dim, cfg.K, ef, ds.GT, cfg.Reps)
		emit(queryRow(peer+"-graph+sq8", ds, "query", ef, 0, s))
		s = MeasureQueries(p.QueryReranked(ds.Base, cfg.Dim), ds.Queries, cfg.Dim, cfg.K, ef, ds.GT, cfg.Reps)
		emit(queryRow(peer+"-graph+sq8+rerank", ds, "query", ef, 0, s))
	}
	return nil
}
