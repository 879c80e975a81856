package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// runStoragePeers puts the same n vectors (the storage corpus's, cosine
// space) into a cairn float32 collection, a cairn SQ8 collection, a
// collection of the real Chroma 1.0.0 server, an hnswlib index and faiss
// HNSW indexes (flat and 8-bit SQ), and reports bytes on disk per vector
// and the resident memory of a process that opened the store and answered
// one query (cairn: a child process, `storage-load`; Chroma: its server's
// process group; hnswlib and faiss: bench/peers/pypeer.py --load, and the
// native hnswlib program loading the same file).
func runStoragePeers(ctx context.Context, args []string) error {
	fl := flag.NewFlagSet("storage-peers", flag.ExitOnError)
	n := fl.Int("n", 100000, "vectors")
	dim := fl.Int("dim", 384, "dimension")
	seed := fl.Uint64("seed", 1, "corpus seed")
	jsDir := fl.String("js", "testdata/js", "directory whose node_modules holds chromadb (Chroma 1.0.0); empty skips Chroma")
	stores := fl.String("stores", "cairn-float32,cairn-sq8,chroma,hnswlib,faiss,faiss-sq8", "stores, in this order")
	python := fl.String("python", "/usr/bin/python3", "python with numpy, hnswlib and faiss (make bench-index-deps)")
	peersDir := fl.String("peers-dir", "bench/peers", "directory holding pypeer.py")
	native := fl.String("native", "", "compiled bench/peers/hnswlib_native (bench/peers/run.sh builds it): also load the hnswlib file natively")
	threads := fl.Int("threads", 2, "build threads of hnswlib and faiss")
	fl.Parse(args)

	g := newGen(*seed)
	texts := make([]string, *n)
	for i := range texts {
		texts[i] = g.message(i).Content
	}
	vecs, err := newSynth(*dim, g.vocab).Embed(ctx, texts)
	if err != nil {
		return err
	}
	raw := float64(*n * *dim * 4)
	fmt.Printf("# vector storage against peers, n=%d dim=%d (raw float32 %.1f MB), %s, %s, %d CPUs\n\n", *n, *dim, raw/1e6,
		time.Now().UTC().Format(time.RFC3339), runtime.Version(), runtime.NumCPU())
	fmt.Println("| store | bytes on disk | per vector | x raw float32 | resident memory after open + 1 query | of which the open added |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	row := func(name string, disk, rss, added int64) {
		add := "-"
		if added > 0 {
			add = fmt.Sprintf("%.1f MB", float64(added)/1e6)
		}
		fmt.Printf("| %s | %.1f MB | %.0f B | %.2fx | %.1f MB | %s |\n", name, float64(disk)/1e6, float64(disk)/float64(*n), float64(disk)/raw, float64(rss)/1e6, add)
	}
	want := map[string]bool{}
	for _, st := range strings.Split(*stores, ",") {
		want[strings.TrimSpace(st)] = true
	}
	for _, code := range []string{"float32", "sq8"} {
		if !want["cairn-"+code] {
			continue
		}
		dir, err := os.MkdirTemp("", "storage-peers-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		s, err := vecstore.Open(ctx, dir, vecstore.Options{})
		if err != nil {
			return err
		}
		c, err := s.CreateCollection(ctx, chroma.CreateCollectionRequest{Name: "peers", Metadata: chroma.Metadata{
			"hnsw:space": where.String("cosine"), chroma.MetaVectorCode: where.String(code)}})
		if err != nil {
			return err
		}
		for b := 0; b < *n; b += 1000 {
			req := chroma.AddRequest{}
			for i := b; i < min(b+1000, *n); i++ {
				req.IDs = append(req.IDs, strconv.Itoa(i))
				req.Embeddings = append(req.Embeddings, vecs[i])
			}
			if err := s.Add(ctx, c.ID, req); err != nil {
				return err
			}
		}
		if err := s.Close(); err != nil {
			return err
		}
		out, err := exec.CommandContext(ctx, os.Args[0], "storage-load", dir, c.ID, strconv.Itoa(*dim)).Output()
		if err != nil {
			return fmt.Errorf("storage-load: %w", err)
		}
		var rss, added int64
		fmt.Sscan(string(out), &rss, &added)
		row("cairn vecstore, "+code, bench.PathBytes(dir), rss, added)
	}
	if err := indexPeerRows(ctx, vecs, *dim, want, *python, *peersDir, *native, *threads, row); err != nil {
		return err
	}
	if *jsDir == "" || !want["chroma"] {
		return nil
	}
	js, err := filepath.Abs(*jsDir)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "storage-peers-chroma-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	url, cmd, err := startChroma(ctx, js, filepath.Join(dir, "data"))
	if err != nil {
		return err
	}
	defer stopChroma(cmd)
	base := url + "/api/v2/tenants/default_tenant/databases/default_database/collections"
	var coll struct{ ID string }
	if err := bench.ChromaPost(ctx, base, map[string]any{"name": "peers", "configuration": map[string]any{"hnsw": map[string]any{"space": "cosine"}}}, &coll); err != nil {
		return err
	}
	for b := 0; b < *n; b += 1000 {
		var ids []string
		var embs [][]float32
		for i := b; i < min(b+1000, *n); i++ {
			ids = append(ids, strconv.Itoa(i))
			embs = append(embs, vecs[i])
		}
		if err := bench.ChromaPost(ctx, base+"/"+coll.ID+"/add", map[string]any{"ids": ids, "embeddings": embs}, nil); err != nil {
			return err
		}
	}
	if err := bench.ChromaPost(ctx, base+"/"+coll.ID+"/query", map[string]any{"query_embeddings": [][]float32{vecs[0]}, "n_results": 10}, nil); err != nil {
		return err
	}
	rss := bench.GroupRSS(cmd.Process.Pid)
	// A graceful stop lets Chroma flush its HNSW segment before the data
	// directory is measured.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
	}
	row("Chroma 1.0.0 (SQLite + HNSW segment)", bench.PathBytes(dir), rss, 0)
	return nil
}

// runStorageLoad is the child of storage-peers: it opens the store in
// dir, answers one query on collection id and prints its resident memory.
func runStorageLoad(ctx context.Context, args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: storage-load DIR COLLECTION DIM")
	}
	dim, _ := strconv.Atoi(args[2])
	base := bench.GroupRSS(os.Getpid())
	s, err := vecstore.Open(ctx, args[0], vecstore.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	q := make([]float32, dim)
	q[0] = 1
	if _, err := s.Query(ctx, args[1], chroma.QueryRequest{Embeddings: [][]float32{q}}); err != nil {
		return err
	}
	runtime.GC()
	rss := bench.GroupRSS(os.Getpid())
	fmt.Println(rss, rss-base)
	return nil
}

// indexPeerRows adds the rows of hnswlib and faiss: bench/peers/pypeer.py
// builds each index over vecs (cosine: hnswlib's cosine space, faiss inner
// product on normalized vectors) and saves it; a fresh pypeer.py process
// loads it and answers one query; the native hnswlib program, when given,
// loads the same hnswlib file without an interpreter.
func indexPeerRows(ctx context.Context, vecs [][]float32, dim int, want map[string]bool, python, peersDir, native string, threads int,
	row func(name string, disk, rss, added int64)) error {
	libs := []string{}
	for _, lib := range []string{"hnswlib", "faiss", "faiss-sq8"} {
		if want[lib] {
			libs = append(libs, lib)
		}
	}
	if len(libs) == 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "storage-peers-index-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	flat := make([]float32, 0, len(vecs)*dim)
	for _, v := range vecs {
		flat = append(flat, v...)
	}
	basePath, queryPath := filepath.Join(dir, "base.fvecs"), filepath.Join(dir, "query.fvecs")
	if err := bench.WriteFvecs(basePath, flat, dim); err != nil {
		return err
	}
	if err := bench.WriteFvecs(queryPath, flat[:dim], dim); err != nil {
		return err
	}
	script := filepath.Join(peersDir, "pypeer.py")
	names := map[string]string{"hnswlib": "hnswlib 0.6.2 (Debian, Python; index file)", "faiss": "faiss 1.7.3 IndexHNSWFlat (Debian)",
		"faiss-sq8": "faiss 1.7.3 IndexHNSWSQ 8-bit (Debian)"}
	for _, lib := range libs {
		save := filepath.Join(dir, lib+".index")
		build := exec.CommandContext(ctx, python, script, "--lib", lib, "--dataset", "storage", "--space", "cosine",
			"--base", basePath, "--query", queryPath, "--efs", "", "--threads", strconv.Itoa(threads), "--save", save)
		build.Stderr = os.Stderr
		if _, err := build.Output(); err != nil {
			return fmt.Errorf("%s build: %w", lib, err)
		}
		fp, err := footprintRow(exec.CommandContext(ctx, python, script, "--lib", lib, "--space", "cosine", "--load", save,
			"--query", queryPath, "--dataset", "storage"))
		if err != nil {
			return fmt.Errorf("%s load: %w", lib, err)
		}
		row(names[lib], fp.DiskB, fp.RSSB, fp.Bytes)
		if lib == "hnswlib" && native != "" {
			fp, err := footprintRow(exec.CommandContext(ctx, native, "load", save, queryPath, "storage"))
			if err != nil {
				return fmt.Errorf("native hnswlib load: %w", err)
			}
			row("hnswlib 0.6.2 native (-O3 -march=native), the same file", fp.DiskB, fp.RSSB, fp.Bytes)
		}
		os.Remove(save)
	}
	return nil
}

// footprintRow runs a footprint process and decodes its JSON row.
func footprintRow(cmd *exec.Cmd) (bench.IndexRow, error) {
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return bench.IndexRow{}, err
	}
	var r bench.IndexRow
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	err = json.Unmarshal([]byte(lines[len(lines)-1]), &r)
	return r, err
}
