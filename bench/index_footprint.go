package bench

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/index"
	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// A footprint measures what an index costs once it is built: each peer saves
// it in its own format (cairn: index.MarshalBinary or a vecstore directory;
// hnswlib: saveIndex; faiss: write_index), then a fresh process loads it and
// answers one query. The row gives the bytes on disk (DiskB), that process's
// VmRSS (RSSB) and the part of it the load added (Bytes), so an interpreter's
// own memory is visible and can be left out.

// footprintNote is the Note of every footprint row.
const footprintNote = "disk = saved index; rss = VmRSS of a fresh process after load + 1 query; bytes = RSS added by the load"

// GroupRSS is the resident memory (VmRSS) of the processes in pid's
// process group (pid alone when it leads none).
func GroupRSS(pid int) int64 {
	var total int64
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pg, err := syscall.Getpgid(p); err != nil || (pg != pid && p != pid) {
			continue
		}
		total += statusKB(filepath.Join("/proc", e.Name(), "status"), "VmRSS:") * 1024
	}
	return total
}

// selfRSS is this process's VmRSS after returning freed memory to the OS.
func selfRSS() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	return statusKB("/proc/self/status", "VmRSS:") * 1024
}

func statusKB(path, field string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// PathBytes is the size of a file, or the total size of the files under a
// directory.
func PathBytes(path string) int64 {
	var total int64
	_ = filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
		}
		return nil
	})
	return total
}

// SaveCairnIndex writes the index with MarshalBinary (vectors included) to
// path.
func SaveCairnIndex(p *CairnPeer, path string) error {
	data, err := p.Idx.MarshalBinary()
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// FootprintRequest is what a loader process (indexbench footprint) is
// asked to measure.
type FootprintRequest struct {
	Kind    string // "cairn" (a MarshalBinary file) or "vecstore" (a store directory)
	Path    string
	Peer    string
	Dataset string
	Query   []float32 // one query vector
	// Queries, GT and Reps, for vecstore: after the footprint, the queries
	// are also measured through the store (its own beam), one row.
	Queries []float32
	GT      [][]uint32
	Reps    int
	K       int
}

// MeasureFootprint loads the saved index in this process and emits its
// footprint row (and, for a vecstore with GT, a query row).
func MeasureFootprint(ctx context.Context, req FootprintRequest, emit func(IndexRow)) error {
	base := selfRSS()
	dim := len(req.Query)
	k := max(req.K, 10)
	var n int
	var query QueryFunc
	switch req.Kind {
	case "cairn":
		data, err := os.ReadFile(req.Path)
		if err != nil {
			return err
		}
		idx, err := index.Unmarshal(data)
		if err != nil {
			return err
		}
		p := &CairnPeer{Idx: idx}
		n, query = idx.Len(), p.Query
		defer runtime.KeepAlive(p)
	case "vecstore":
		s, err := vecstore.Open(ctx, req.Path, vecstore.Options{})
		if err != nil {
			return err
		}
		defer s.Close()
		c, err := s.GetCollection(ctx, chroma.DefaultTenant, chroma.DefaultDatabase, vecstoreBenchCollection)
		if err != nil {
			return err
		}
		if n, err = s.Count(ctx, c.ID); err != nil {
			return err
		}
		query = func(q []float32, k, _ int) []uint32 {
			res, err := s.Query(ctx, c.ID, chroma.QueryRequest{Embeddings: [][]float32{q}, NResults: &k,
				Include: []chroma.Include{}})
			if err != nil {
				panic(err)
			}
			ids := make([]uint32, 0, len(res.IDs[0]))
			for _, id := range res.IDs[0] {
				v, _ := strconv.ParseUint(id, 10, 32)
				ids = append(ids, uint32(v))
			}
			return ids
		}
	default:
		return fmt.Errorf("bench: footprint kind %q", req.Kind)
	}
	query(req.Query, k, 0)
	rss := selfRSS()
	emit(IndexRow{Peer: req.Peer, Dataset: req.Dataset, N: n, Kind: "footprint", DiskB: PathBytes(req.Path),
		RSSB: rss, Bytes: rss - base, Note: footprintNote})
	if req.Kind == "vecstore" && len(req.GT) > 0 {
		s := MeasureQueries(query, req.Queries, dim, k, 0, req.GT, req.Reps)
		r := IndexRow{Peer: req.Peer, Dataset: req.Dataset, N: n, Kind: "query", Ef: vecstoreEfSearch,
			Recall: s.Recall, P50us: s.P50us, P99us: s.P99us, MeanUs: s.MeanUs, CPUP50: s.CPUP50, CPUP99: s.CPUP99,
			Note: "through vecstore.Query at search_ef 100 (beam: 2x float32, 3x sq8)"}
		emit(r)
	}
	return nil
}

// vecstoreBenchCollection is the collection the vecstore peers write.
const vecstoreBenchCollection = "bench"

// vecstoreEfSearch is the collection's search_ef (vecstore's default).
const vecstoreEfSearch = 100

// vecstorePeers maps the vecstore peer names to their vector code.
var vecstorePeers = map[string]string{"vecstore": "float32", "vecstore-sq8": "sq8"}

// BuildVecstore writes every row of base into a new store in dir (one
// collection in space, M and ef_construction as given, ids "0".."n-1"), in batches of
// 1,000, with workers graph-insert goroutines, and closes it: the whole
// store as cairn keeps it (records, graph, vectors), not only the index.
func BuildVecstore(ctx context.Context, dir string, base []float32, dim, m, efc, workers int, space index.Space, code string) (wall, cpu time.Duration, err error) {
	s, err := vecstore.Open(ctx, dir, vecstore.Options{IndexWorkers: workers})
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		if cerr := s.Close(); err == nil {
			err = cerr
		}
	}()
	c, err := s.CreateCollection(ctx, chroma.CreateCollectionRequest{Name: vecstoreBenchCollection, Metadata: chroma.Metadata{
		"hnsw:space": where.String(space.String()), "hnsw:M": where.Int(int64(m)), "hnsw:construction_ef": where.Int(int64(efc)),
		"hnsw:search_ef": where.Int(vecstoreEfSearch), chroma.MetaVectorCode: where.String(code)}})
	if err != nil {
		return 0, 0, err
	}
	n := len(base) / dim
	prev := runtime.GOMAXPROCS(workers)
	defer runtime.GOMAXPROCS(prev)
	c0 := processCPU()
	t0 := time.Now()
	for b := 0; b < n; b += 1000 {
		req := chroma.AddRequest{}
		for i := b; i < min(b+1000, n); i++ {
			req.IDs = append(req.IDs, strconv.Itoa(i))
			req.Embeddings = append(req.Embeddings, base[i*dim:(i+1)*dim:(i+1)*dim])
		}
		if err := s.Add(ctx, c.ID, req); err != nil {
			return 0, 0, err
		}
	}
	return time.Since(t0), processCPU() - c0, nil
}
