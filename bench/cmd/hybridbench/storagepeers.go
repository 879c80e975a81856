package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io/fs"
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
	"github.com/cairn-dev/cairn/vecstore/where"
)

// runStoragePeers puts the same n vectors (the storage corpus's, cosine
// space) into a cairn float32 collection, a cairn SQ8 collection and a
// collection of the real Chroma 1.0.0 server, and reports bytes on disk
// per vector and the resident memory of a process that opened the store
// and answered one query (cairn: a child process, `storage-load`; Chroma:
// its server's process group).
func runStoragePeers(ctx context.Context, args []string) error {
	fl := flag.NewFlagSet("storage-peers", flag.ExitOnError)
	n := fl.Int("n", 100000, "vectors")
	dim := fl.Int("dim", 384, "dimension")
	seed := fl.Uint64("seed", 1, "corpus seed")
	jsDir := fl.String("js", "testdata/js", "directory whose node_modules holds chromadb (Chroma 1.0.0); empty skips Chroma")
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
	fmt.Println("| store | bytes on disk | per vector | x raw float32 | resident memory after open + 1 query |")
	fmt.Println("|---|---:|---:|---:|---:|")
	row := func(name string, disk, rss int64) {
		fmt.Printf("| %s | %.1f MB | %.0f B | %.2fx | %.1f MB |\n", name, float64(disk)/1e6, float64(disk)/float64(*n), float64(disk)/raw, float64(rss)/1e6)
	}
	for _, code := range []string{"float32", "sq8"} {
		dir, err := os.MkdirTemp("", "storage-peers-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		s, err := vecstore.Open(ctx, dir, vecstore.Options{})
		if err != nil {
			return err
		}
		c, err := s.CreateCollection(ctx, vecstore.CreateCollectionRequest{Name: "peers", Metadata: vecstore.Metadata{
			"hnsw:space": where.String("cosine"), vecstore.MetaVectorCode: where.String(code)}})
		if err != nil {
			return err
		}
		for b := 0; b < *n; b += 1000 {
			req := vecstore.AddRequest{}
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
		rss, _ := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		row("cairn vecstore, "+code, dirBytes(dir), rss)
	}
	if *jsDir == "" {
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
	rss := groupRSS(cmd.Process.Pid)
	// A graceful stop lets Chroma flush its HNSW segment before the data
	// directory is measured.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
	}
	row("Chroma 1.0.0 (SQLite + HNSW segment)", dirBytes(dir), rss)
	return nil
}

// runStorageLoad is the child of storage-peers: it opens the store in
// dir, answers one query on collection id and prints its resident memory.
func runStorageLoad(ctx context.Context, args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: storage-load DIR COLLECTION DIM")
	}
	dim, _ := strconv.Atoi(args[2])
	s, err := vecstore.Open(ctx, args[0], vecstore.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	q := make([]float32, dim)
	q[0] = 1
	if _, err := s.Query(ctx, args[1], vecstore.QueryRequest{Embeddings: [][]float32{q}}); err != nil {
		return err
	}
	runtime.GC()
	fmt.Println(groupRSS(os.Getpid()))
	return nil
}

// dirBytes is the total size of the files under dir.
func dirBytes(dir string) int64 {
	var total int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
		}
		return nil
	})
	return total
}

// groupRSS is the resident memory (VmRSS) of the processes in pid's
// process group (pid alone when it leads none).
func groupRSS(pid int) int64 {
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
		f, err := os.Open(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				total += kb * 1024
			}
		}
		f.Close()
	}
	return total
}
