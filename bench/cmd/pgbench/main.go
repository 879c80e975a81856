// Command pgbench compares cairn's embedded store with its PostgreSQL
// store (engine/postgres) side by side in one run.
//
//	pgbench keyword [--data DIR] [--sets cranfield,cosqa,stsb] [--dsn URL]
//
// keyword loads each dev set into both stores and runs every judged query
// in keyword mode, the embedded store with its in-memory keyword index
// built (exact BM25, as in a long-running process): it reports how often the top-10 lists are identical,
// their mean overlap, the largest score difference and nDCG@10 on each
// side.
//
//	pgbench load [--n 10000] [--queries 200] [--dim 384] [--ef-search LIST] [--dsn URL]
//
// load writes n synthetic messages to each store (batches of 500) and
// reports write throughput, hybrid search p50/p95 without and with filters
// of 1%, 10% and 50% selectivity, and recall@10 of the semantic side at
// each selectivity against an exact scan. Embedding is a feature-hashed
// bag of words (bench.LexicalEmbedder) in both: the figures measure the
// stores, not a model. --ef-search 400,800 searches PostgreSQL's loaded
// database again with each of those hnsw.ef_search values.
//
//	pgbench serve [--seed 10000] [--procs 3] [--agents 50] [--ops 40] [--model none] [--cairn BIN]
//
// serve stores seed messages in PostgreSQL, starts procs `cairn serve
// --store postgres://...` processes on loopback ports and runs agents
// concurrent simulated agents of ops requests each (half writes, some of
// them the same write from every agent; hybrid searches; reads of an
// acknowledged write), spread over the processes; then it reads every
// acknowledged write back from another process. It reports requests and
// writes per second, p50/p95 per kind of request, errors, lost writes and
// ids given twice, and the same for one serve process on the embedded
// store with the same seed (--embedded=false skips it). With --model none
// (the default) searches are keyword only: no model runs in the serve
// processes.
//
// Each subcommand starts a PostgreSQL server of its own
// (internal/pgtest: `make pg-env` installs it).
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/postgres"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/pgtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: pgbench keyword|load|serve [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "keyword":
		err = runKeyword(ctx, os.Args[2:])
	case "load":
		err = runLoad(ctx, os.Args[2:])
	case "serve":
		err = runServe(ctx, os.Args[2:])
	default:
		fmt.Fprintf(os.Stderr, "unknown subcommand %q\n", os.Args[1])
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgbench:", err)
		os.Exit(1)
	}
}

// databases hands out empty PostgreSQL databases: on --dsn's server, or on
// a server of this process's own.
type databases struct {
	srv *pgtest.Server
}

func newDatabases(ctx context.Context, dsn string) (*databases, error) {
	if dsn != "" {
		return nil, fmt.Errorf("--dsn is not supported yet: each run needs fresh databases; omit it")
	}
	srv, err := pgtest.Start(ctx)
	if err != nil {
		return nil, err
	}
	return &databases{srv: srv}, nil
}

// open opens an engine on a new database; dsn names the database.
func (d *databases) open(ctx context.Context, emb engine.Embedder, opts engine.Options) (e *engine.Engine, dsn string, err error) {
	if dsn, err = d.srv.NewDatabase(ctx); err != nil {
		return nil, "", err
	}
	e, err = openPostgresEngine(ctx, dsn, postgres.Options{}, emb, opts)
	return e, dsn, err
}

// openPostgresEngine opens an engine on the PostgreSQL database dsn.
func openPostgresEngine(ctx context.Context, dsn string, pgOpts postgres.Options, emb engine.Embedder, opts engine.Options) (*engine.Engine, error) {
	st, err := postgres.Open(ctx, dsn, pgOpts)
	if err != nil {
		return nil, err
	}
	opts.Embedder = emb
	e, err := engine.OpenBackend(ctx, st, postgres.Kind, "", opts)
	if err != nil {
		st.Close()
		return nil, err
	}
	return e, nil
}

func (d *databases) close() { _ = d.srv.Stop() }

func runKeyword(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("keyword", flag.ExitOnError)
	data := fs.String("data", "/work/shared/datasets", "dev sets `DIR`")
	sets := fs.String("sets", "cranfield,cosqa,stsb", "comma-separated dev sets")
	dsn := fs.String("dsn", "", "PostgreSQL server `URL` (default: start one)")
	fs.Parse(args)
	dbs, err := newDatabases(ctx, *dsn)
	if err != nil {
		return err
	}
	defer dbs.close()
	fmt.Println("| set | queries | identical top-10 | mean top-10 overlap | max score diff | nDCG@10 embedded | nDCG@10 PostgreSQL |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	for _, name := range strings.Split(*sets, ",") {
		s, err := bench.LoadDevSet(*data, name)
		if err != nil {
			return err
		}
		dir, err := os.MkdirTemp("", "pgbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		opts := engine.Options{Now: bench.CorpusClock, NoVectorWorker: true}
		a, st, err := sqlite.OpenEngineStore(ctx, dir, opts, sqlite.Options{})
		if err != nil {
			return err
		}
		ca, err := bench.LoadCorpusInto(ctx, a, s)
		if err != nil {
			return err
		}
		if err := warmKeywordIndex(ctx, ca, st); err != nil {
			return err
		}
		b, _, err := dbs.open(ctx, nil, opts)
		if err != nil {
			return err
		}
		cb, err := bench.LoadCorpusInto(ctx, b, s)
		if err != nil {
			return err
		}
		var n, identical int
		var overlap, ndcgA, ndcgB, maxDiff float64
		req := engine.SearchRequest{Mode: engine.ModeKeyword}
		for _, q := range s.Queries {
			rel := s.Qrels[q.ID]
			if len(rel) == 0 {
				continue
			}
			ra, xa, err := ca.Ranked(ctx, req, q, 10)
			if err != nil {
				return err
			}
			rb, xb, err := cb.Ranked(ctx, req, q, 10)
			if err != nil {
				return err
			}
			n++
			if strings.Join(ra, ",") == strings.Join(rb, ",") {
				identical++
			}
			overlap += topOverlap(ra, rb, 10)
			ndcgA += bench.NDCG(ra, rel, 10)
			ndcgB += bench.NDCG(rb, rel, 10)
			for i := range min(len(xa), len(xb)) {
				if xa[i].Message.ID == xb[i].Message.ID {
					maxDiff = max(maxDiff, math.Abs(xa[i].KeywordScore-xb[i].KeywordScore))
				}
			}
		}
		fmt.Printf("| %s | %d | %.1f%% | %.4f | %.2g | %.4f | %.4f |\n", s.Name, n, 100*float64(identical)/float64(n),
			overlap/float64(n), maxDiff, ndcgA/float64(n), ndcgB/float64(n))
		ca.Close()
		cb.Close()
	}
	return nil
}

// warmKeywordIndex runs one keyword search on c's embedded engine and
// waits for its data dir's (st) in-memory keyword index, which ranks every query term by
// BM25 (as a long-running process does; a one-shot process ranks on FTS5
// without the most frequent terms).
func warmKeywordIndex(ctx context.Context, c *bench.Corpus, st *sqlite.Store) error {
	if _, _, err := c.Ranked(ctx, engine.SearchRequest{Mode: engine.ModeKeyword}, bench.Query{Text: "warm up"}, 1); err != nil {
		return err
	}
	for !st.KeywordIndexReady() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// topOverlap is the share of a's first k ids that are among b's first k.
func topOverlap(a, b []string, k int) float64 {
	a, b = a[:min(k, len(a))], b[:min(k, len(b))]
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	hit := 0
	for _, x := range a {
		if in[x] {
			hit++
		}
	}
	return float64(hit) / float64(max(len(a), len(b)))
}
