package gitcrumbs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/cmd/cairn/gitcrumbs"
	"github.com/cairn-dev/cairn/cmd/cairn/searchwire"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// The marks benchmark: benchNotes notes with three breadcrumbs each (two
// file ranges and the commit they were written at) against a real
// repository of benchFiles files, built from a fixed seed. It measures
// what a search pays for the marks (reading HEAD and one cache lookup:
// never git), with the filter and the demotion, with a cache at another
// HEAD, and a whole refresh through git.
const (
	benchNotes = 100_000
	benchFiles = 400
	benchSeed  = 7
)

// switchableHead reads the real HEAD, or reports the repository not
// reachable (reads then attach the last marks without comparing HEADs).
type switchableHead struct {
	hf  *gitcrumbs.HeadFile
	off atomic.Bool
}

func (s *switchableHead) Head(string) (string, error) {
	if s.off.Load() {
		return "", gitcrumbs.ErrNoRepo
	}
	return s.hf.Head()
}

func BenchmarkMarks(b *testing.B) {
	ctx := context.Background()
	start := time.Now()
	g := newRepo(b)
	for i := range benchFiles {
		g.write(fmt.Sprintf("pkg%d/file%d.go", i%20, i), lines(60, fmt.Sprintf("f%d", i)))
	}
	c1, _ := g.commit("files")
	hf, err := gitcrumbs.FindRepo(g.dir)
	if err != nil {
		b.Fatal(err)
	}
	head := &switchableHead{hf: hf}
	eng, err := sqlite.OpenEngine(ctx, b.TempDir(), engine.Options{BreadcrumbRepos: head}, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	rng := rand.New(rand.NewPCG(benchSeed, 0))
	words := []string{"retry", "backoff", "cache", "index", "vector", "lock", "wal", "schema", "query", "rank", "token", "merge"}
	const batch = 5000
	for i := 0; i < benchNotes; i += batch {
		msgs := make([]engine.NewMessage, 0, batch)
		for j := i; j < i+batch; j++ {
			ws := make([]string, 12)
			for k := range ws {
				ws[k] = words[rng.IntN(len(words))]
			}
			file := func() string {
				f := rng.IntN(benchFiles)
				from := 1 + rng.IntN(50)
				return fmt.Sprintf("pkg%d/file%d.go:%d-%d", f%20, f, from, from+rng.IntN(10))
			}
			md, _ := json.Marshal(map[string]any{"breadcrumbs": map[string][]string{"files": {file(), file()}, "commits": {c1.String()}}})
			msgs = append(msgs, engine.NewMessage{Channel: "notes", Sender: "bench", Content: fmt.Sprintf("%s (%d)", strings.Join(ws, " "), j), Metadata: md})
		}
		if _, err := eng.StoreMessages(ctx, msgs); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("corpus: %d notes x 3 breadcrumbs, %d files, in %s", benchNotes, benchFiles, time.Since(start).Round(time.Millisecond))

	refresh := func(b *testing.B, name string) {
		t0 := time.Now()
		_, n, err := gitcrumbs.Refresh(ctx, eng, g.dir)
		if err != nil || n != benchNotes {
			b.Fatalf("refresh: %d checked, %v", n, err)
		}
		d := time.Since(t0)
		b.Logf("%s refresh: %d notes (%d breadcrumbs) in %s, %.1f µs per breadcrumb", name, n, 3*n, d.Round(time.Millisecond), float64(d.Microseconds())/float64(3*n))
	}
	refresh(b, "first")

	search := func(name string, spec searchwire.SearchSpec, marks bool) {
		b.Run(fmt.Sprintf("n=%d/top=20/%s", benchNotes, name), func(b *testing.B) {
			head.off.Store(!marks)
			defer head.off.Store(false)
			req, err := spec.Request()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := eng.Search(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
		})
	}
	q := searchwire.SearchSpec{Query: "retry backoff cache", Mode: "keyword"}
	withValid, withDemote := q, q
	withValid.BreadcrumbsValid = true
	withDemote.DemoteStale = 0.5
	// Warm up (the keyword index builds in the background after the bulk
	// load), then time searches without marks first and last, so that
	// the marks' cost is a ratio within the run.
	for range 200 {
		req, _ := q.Request()
		if _, err := eng.Search(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	search("marks=off", q, false)
	search("marks=current", q, true)
	search("marks=current/filter=breadcrumbs_valid", withValid, true)
	search("marks=current/demote_stale=0.5", withDemote, true)

	// HEAD moves: a fifth of the files change in their first lines.
	for i := 0; i < benchFiles; i += 5 {
		g.write(fmt.Sprintf("pkg%d/file%d.go", i%20, i), "changed\n"+lines(60, fmt.Sprintf("f%d", i)))
	}
	g.commit("rewrite a fifth")
	search("marks=stale_cache", q, true)
	refresh(b, "after HEAD moved")
	search("marks=current_after_move", q, true)
	search("marks=off/again", q, false)
}
