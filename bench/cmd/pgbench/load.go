package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/postgres"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// loadDoc is one synthetic message of the load run and the values its
// filters select on.
type loadDoc struct {
	content string
	channel string // c-00 .. c-99: 1% each
	sender  string // s-0 .. s-9: 10% each
	typ     string // message or decision: 50% each
}

// selectivity is one filter of the load run.
type selectivity struct {
	name   string
	filter engine.Filter
	keep   func(d loadDoc) bool
}

func selectivities() []selectivity {
	return []selectivity{
		{"none", engine.Filter{}, func(loadDoc) bool { return true }},
		{"1%", engine.Filter{ChannelIDs: []string{"c-07"}}, func(d loadDoc) bool { return d.channel == "c-07" }},
		{"10%", engine.Filter{Where: json.RawMessage(`{"agent_name": "s-3"}`)}, func(d loadDoc) bool { return d.sender == "s-3" }},
		{"50%", engine.Filter{MessageTypes: []string{engine.TypeDecision}}, func(d loadDoc) bool { return d.typ == engine.TypeDecision }},
	}
}

func runLoad(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	data := fs.String("data", "/work/shared/datasets", "dev sets `DIR` (texts and queries come from cosqa and cranfield)")
	n := fs.Int("n", 10000, "messages per store")
	nq := fs.Int("queries", 200, "queries per filter")
	dim := fs.Int("dim", 384, "embedding dimension")
	dsn := fs.String("dsn", "", "PostgreSQL server `URL` (default: start one)")
	efList := fs.String("ef-search", "", "also search PostgreSQL with each hnsw.ef_search in `LIST` (comma-separated, e.g. 400,800), after the default, on the same loaded database")
	fs.Parse(args)
	efs, err := parseEfList(*efList)
	if err != nil {
		return err
	}
	docs, queries, err := loadWorkload(*data, *n, *nq)
	if err != nil {
		return err
	}
	emb := bench.LexicalEmbedder{D: *dim}
	dbs, err := newDatabases(ctx, *dsn)
	if err != nil {
		return err
	}
	defer dbs.close()
	dir, err := os.MkdirTemp("", "pgbench-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// Recall measures retrieval (the vector index under filters), so
	// semantic search scores each message by its own vector: no turn
	// context, which ranks a turn with its neighbours.
	opts := engine.Options{NoVectorWorker: true, QueryAnalysis: engine.QueryAnalysis{NoTurnContext: true}}
	embOpts := opts
	embOpts.Embedder = emb
	a, err := sqlite.OpenEngine(ctx, dir, embOpts, sqlite.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	b, pgDSN, err := dbs.open(ctx, emb, opts)
	if err != nil {
		return err
	}
	defer b.Close()
	// Exact neighbours, for recall: every document's vector.
	vecs, err := emb.Embed(ctx, contents(docs))
	if err != nil {
		return err
	}
	qvecs, err := emb.Embed(ctx, queries)
	if err != nil {
		return err
	}
	fmt.Printf("%d messages, %d queries per filter, embedding %s (dimension %d)\n\n", len(docs), len(queries), emb.ModelID(), emb.Dim())
	fmt.Println("| store | write msg/s | embed+index msg/s | filter | keyword p50 ms | semantic p50 ms | hybrid p50 ms | hybrid p95 ms | semantic recall@10 |")
	fmt.Println("|---|---:|---:|---|---:|---:|---:|---:|---:|")
	for _, st := range []struct {
		name string
		e    *engine.Engine
	}{{"embedded (SQLite + vecstore)", a}, {"PostgreSQL + pgvector", b}} {
		ids, write, index, err := fill(ctx, st.e, docs)
		if err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
		rates := fmt.Sprintf("%.0f | %.0f", float64(len(docs))/write.Seconds(), float64(len(docs))/index.Seconds())
		if err := searchRows(ctx, st.name, rates, st.e, queries, qvecs, vecs, ids, docs); err != nil {
			return err
		}
		if st.e != b {
			continue
		}
		for _, ef := range efs {
			c, err := openPostgresEngine(ctx, pgDSN, postgres.Options{EfSearch: ef}, emb, opts)
			if err != nil {
				return err
			}
			err = searchRows(ctx, fmt.Sprintf("%s, ef_search %d", st.name, ef), rates, c, queries, qvecs, vecs, ids, docs)
			c.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// searchRows prints one table row per selectivity: e's keyword, semantic
// and hybrid p50, hybrid p95 and semantic recall@10.
func searchRows(ctx context.Context, name, rates string, e *engine.Engine, queries []string, qvecs, vecs [][]float32, ids []int64, docs []loadDoc) error {
	for _, sel := range selectivities() {
		var p50s [3]time.Duration
		var p95 time.Duration
		var err error
		for i, mode := range []engine.SearchMode{engine.ModeKeyword, engine.ModeSemantic, engine.ModeHybrid} {
			if p50s[i], p95, err = latency(ctx, e, queries, sel.filter, mode); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		rec, err := semanticRecall(ctx, e, queries, qvecs, vecs, ids, docs, sel)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Printf("| %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %.3f |\n", name, rates,
			sel.name, ms(p50s[0]), ms(p50s[1]), ms(p50s[2]), ms(p95), rec)
	}
	return nil
}

// parseEfList reads --ef-search's comma-separated values.
func parseEfList(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 || v > 1000 {
			return nil, fmt.Errorf("--ef-search: each value must be an integer 1..1000, got %q", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func contents(docs []loadDoc) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.content
	}
	return out
}

// loadWorkload makes n messages from the dev sets' documents (numbered
// past the first round, so that each is distinct) and nq queries.
func loadWorkload(data string, n, nq int) ([]loadDoc, []string, error) {
	var texts, queries []string
	for _, name := range []string{"cosqa", "cranfield"} {
		s, err := bench.LoadDevSet(data, name)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range s.Docs {
			texts = append(texts, bench.DocContent(d))
		}
		for _, q := range s.Queries {
			queries = append(queries, q.Text)
		}
	}
	docs := make([]loadDoc, n)
	for i := range docs {
		c := texts[i%len(texts)]
		if i >= len(texts) {
			c = fmt.Sprintf("%s (copy %d)", c, i/len(texts))
		}
		typ := engine.TypeMessage
		if i%2 == 1 {
			typ = engine.TypeDecision
		}
		docs[i] = loadDoc{content: c, channel: fmt.Sprintf("c-%02d", i%100), sender: fmt.Sprintf("s-%d", (i/100)%10), typ: typ}
	}
	if nq < len(queries) {
		// Spread over both sets.
		step := len(queries) / nq
		var out []string
		for i := 0; i < len(queries) && len(out) < nq; i += step {
			out = append(out, queries[i])
		}
		queries = out
	}
	return docs, queries, nil
}

// fill stores docs (fillMessages) and then embeds and indexes them; it
// returns the message ids and both times.
func fill(ctx context.Context, e *engine.Engine, docs []loadDoc) ([]int64, time.Duration, time.Duration, error) {
	ids, write, err := fillMessages(ctx, e, docs)
	if err != nil {
		return nil, 0, 0, err
	}
	start := time.Now()
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		return nil, 0, 0, err
	}
	return ids, write, time.Since(start), nil
}

// latency runs every query in mode (limit 10) with filter f, after a
// warm-up, and returns p50 and p95.
func latency(ctx context.Context, e *engine.Engine, queries []string, f engine.Filter, mode engine.SearchMode) (time.Duration, time.Duration, error) {
	for _, q := range queries[:min(20, len(queries))] {
		if _, err := e.Search(ctx, engine.SearchRequest{Query: q, Filter: f, Limit: 10, Mode: mode}); err != nil {
			return 0, 0, err
		}
	}
	ds := make([]time.Duration, len(queries))
	for i, q := range queries {
		start := time.Now()
		if _, err := e.Search(ctx, engine.SearchRequest{Query: q, Filter: f, Limit: 10, Mode: mode}); err != nil {
			return 0, 0, err
		}
		ds[i] = time.Since(start)
	}
	slices.Sort(ds)
	return ds[len(ds)/2], ds[len(ds)*95/100], nil
}

// semanticRecall is the mean share of the exact top-10 (cosine over the
// documents passing sel) that semantic mode returns.
func semanticRecall(ctx context.Context, e *engine.Engine, queries []string, qvecs, vecs [][]float32, ids []int64, docs []loadDoc, sel selectivity) (float64, error) {
	var total float64
	for qi, q := range queries {
		type cand struct {
			id  int64
			sim float64
		}
		var all []cand
		for i, d := range docs {
			if sel.keep(d) {
				all = append(all, cand{ids[i], engine.Cosine(qvecs[qi], vecs[i])})
			}
		}
		sort.Slice(all, func(i, j int) bool {
			return all[i].sim > all[j].sim || all[i].sim == all[j].sim && all[i].id < all[j].id
		})
		want := map[int64]bool{}
		for _, c := range all[:min(10, len(all))] {
			want[c.id] = true
		}
		res, err := e.Search(ctx, engine.SearchRequest{Query: q, Filter: sel.filter, Limit: 10, Mode: engine.ModeSemantic})
		if err != nil {
			return 0, err
		}
		hit := 0
		for _, r := range res {
			if want[r.Message.ID] {
				hit++
			}
		}
		if len(want) > 0 {
			total += float64(hit) / float64(len(want))
		}
	}
	return total / float64(len(queries)), nil
}
