package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/search"
)

// calRow is one search result of the calibration run: its features, the
// relevance the engine gave it, and whether it is relevant.
type calRow struct {
	group    string // the set, or "no-answer"
	unit     string // the set, or the LoCoMo conversation
	mode     engine.SearchMode
	sim, kw  float64
	share    float64 // the query's search.KeywordShare
	hasVec   bool
	rel      float64
	relevant bool
	rank     int // 1-based
	query    int // index of the query in the run
}

// calQuery is one query's outcome in hybrid mode, for the floor's table.
type calQuery struct {
	group, unit string
	noAnswer    bool
	top         float64 // best relevance among the results (0: none)
}

var calModes = []engine.SearchMode{engine.ModeHybrid, engine.ModeSemantic, engine.ModeKeyword}

// calDepth is how many results of each search the calibration sees: the
// first page and the one after, where relevant and irrelevant results mix.
const calDepth = 20

// runCalibrate fits the relevance calibration (engine/search) on the dev
// sets and prints the fitted constants, the reliability of the current
// constants per mode, the relevance floor's kept and silenced shares, and
// hybrid against keyword and semantic search on every set and LoCoMo dev
// conversation.
//
// It is long because it is a benchmark driver: load each corpus, run its
// own queries and other sets' queries in every mode, then fit and print.
func runCalibrate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("calibrate", flag.ExitOnError)
	data := fs.String("datasets", "../shared/datasets", "dev datasets `DIR`")
	models := fs.String("models", "builtin=builtin", "the embedding model, `[LABEL=]DIR`")
	cache := fs.String("cache", "/tmp/cairn-quality-cache", "embedding cache `DIR` (\"\" = none)")
	noAnswer := fs.Int("no-answer", 150, "queries of each other set asked against each corpus, as no-answer queries")
	rowsOut := fs.String("rows", "", "also write every result's features, relevance and label to `FILE` (TSV)")
	fs.Parse(args)

	ne, closeModel, err := openModel(ctx, *models, *cache)
	if err != nil {
		return err
	}
	defer closeModel()
	cran, err := bench.LoadDevSet(*data, "cranfield")
	if err != nil {
		return err
	}
	cosqa, err := bench.LoadDevSet(*data, "cosqa")
	if err != nil {
		return err
	}
	convs, err := bench.LoadLoCoMo(filepath.Join(*data, "locomo-dev"))
	if err != nil {
		return err
	}
	var locomoQs []string
	for _, c := range convs {
		for _, q := range c.Questions {
			locomoQs = append(locomoQs, q.Text)
		}
	}
	texts := func(s *bench.RetrievalSet) []string {
		var out []string
		for _, q := range s.Queries {
			if len(s.Qrels[q.ID]) > 0 {
				out = append(out, q.Text)
			}
		}
		return out
	}
	// spread takes n of qs, evenly spaced, so that every part of a set
	// (every LoCoMo conversation) is asked.
	spread := func(qs []string, n int) []string {
		if n >= len(qs) {
			return qs
		}
		out := make([]string, n)
		for i := range out {
			out[i] = qs[i*len(qs)/n]
		}
		return out
	}

	var rows []calRow
	var queries []calQuery
	quality := map[string]map[engine.SearchMode]float64{} // unit -> mode -> nDCG@10 or recall@10
	units := []string{}
	addQuality := func(unit string, mode engine.SearchMode, v float64, n int) {
		if quality[unit] == nil {
			quality[unit] = map[engine.SearchMode]float64{}
			units = append(units, unit)
		}
		quality[unit][mode] += v / float64(n)
	}
	// ask runs query in every mode and records its results; judge says
	// whether a result is relevant (nil: a no-answer query).
	ask := func(e *engine.Engine, group, unit, query string, filter engine.Filter, judge func(engine.SearchResult) bool) (map[engine.SearchMode][]engine.SearchResult, error) {
		qi := len(queries)
		out := map[engine.SearchMode][]engine.SearchResult{}
		queries = append(queries, calQuery{group: group, unit: unit, noAnswer: judge == nil})
		for _, mode := range calModes {
			resp, err := e.SearchDetailed(ctx, engine.SearchRequest{Query: query, Limit: calDepth, Mode: mode, Filter: filter, MinScore: new(float64)})
			if err != nil {
				return nil, fmt.Errorf("%s %q: %w", unit, query, err)
			}
			out[mode] = resp.Results
			for i, r := range resp.Results {
				row := calRow{group: group, unit: unit, mode: mode, sim: max(r.Scores.Similarity, r.Scores.Context), kw: r.Scores.Keyword, share: search.KeywordShare(query),
					hasVec: !r.VectorMissing, rel: r.Scores.Fused, rank: i + 1, query: qi}
				if mode == engine.ModeKeyword {
					row.hasVec = false
				}
				if judge != nil {
					row.relevant = judge(r)
				}
				rows = append(rows, row)
				if mode == engine.ModeHybrid {
					queries[qi].top = max(queries[qi].top, r.Scores.Fused)
				}
			}
		}
		return out, nil
	}

	start := time.Now()
	fmt.Fprintf(os.Stderr, "calibrate: %s\n", ne.name)
	for _, set := range []struct {
		s      *bench.RetrievalSet
		others [][]string
	}{
		{cran, [][]string{spread(texts(cosqa), *noAnswer), spread(locomoQs, *noAnswer)}},
		{cosqa, [][]string{spread(texts(cran), *noAnswer), spread(locomoQs, *noAnswer)}},
	} {
		dir, err := os.MkdirTemp("", "calibrate-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		c, err := bench.LoadCorpus(ctx, dir, set.s, ne.emb)
		if err != nil {
			return err
		}
		n := len(texts(set.s))
		for _, q := range set.s.Queries {
			rel := set.s.Qrels[q.ID]
			if len(rel) == 0 {
				continue
			}
			judge := func(r engine.SearchResult) bool {
				for _, d := range c.DocIDs(r.Message.ID) {
					if rel[d] > 0 {
						return true
					}
				}
				return false
			}
			res, err := ask(c.Engine, set.s.Name, set.s.Name, q.Text, engine.Filter{}, judge)
			if err != nil {
				c.Close()
				return err
			}
			for _, mode := range calModes {
				var ranked []string
				for _, r := range res[mode] {
					ranked = append(ranked, c.DocIDs(r.Message.ID)...)
				}
				addQuality(set.s.Name, mode, bench.NDCG(ranked, rel, 10), n)
			}
		}
		for _, qs := range set.others {
			for _, q := range qs {
				if _, err := ask(c.Engine, "no-answer", set.s.Name, q, engine.Filter{}, nil); err != nil {
					c.Close()
					return err
				}
			}
		}
		c.Close()
		fmt.Fprintf(os.Stderr, "calibrate: %s done (%s)\n", set.s.Name, time.Since(start).Round(time.Second))
	}

	dir, err := os.MkdirTemp("", "calibrate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lc, err := bench.LoadLoCoMoCorpus(ctx, dir, convs, bench.LoCoMoOptions{Captions: true, Engine: engine.Options{Embedder: ne.emb}})
	if err != nil {
		return err
	}
	defer lc.Close()
	foreign := append(spread(texts(cran), *noAnswer/2), spread(texts(cosqa), *noAnswer/2)...)
	for ci, c := range convs {
		unit := "locomo-" + c.ID
		filter := engine.Filter{ChannelIDs: []string{bench.LoCoMoChannel(c)}}
		for _, q := range c.Questions {
			ev := map[string]bool{}
			for _, d := range q.Evidence {
				ev[d] = true
			}
			judge := func(r engine.SearchResult) bool { return ev[lc.DiaID(r.Message.ID)] }
			res, err := ask(lc.Engine, "locomo", unit, q.Text, filter, judge)
			if err != nil {
				return err
			}
			for _, mode := range calModes {
				var ranked []string
				for _, r := range res[mode] {
					ranked = append(ranked, lc.DiaID(r.Message.ID))
				}
				addQuality(unit, mode, bench.TurnRecall10(ranked, q.Evidence), len(c.Questions))
			}
		}
		// Each conversation is asked its share of the other sets' queries.
		for i := ci; i < len(foreign); i += len(convs) {
			if _, err := ask(lc.Engine, "no-answer", unit, foreign[i], filter, nil); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(os.Stderr, "calibrate: locomo done (%s)\n", time.Since(start).Round(time.Second))

	fmt.Printf("# relevance calibration, %s, %s %s/%s, %d CPUs, %s\n\n", time.Now().UTC().Format(time.DateOnly), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), ne.name)
	if *rowsOut != "" {
		if err := writeRows(*rowsOut, rows); err != nil {
			return err
		}
	}
	printFit(rows)
	printReliability(rows)
	printFloor(rows, queries)
	printSides(units, quality)
	return nil
}

// printFit fits each mode's logistic calibration and prints it as the Go
// constants of engine/search.
func printFit(rows []calRow) {
	// Each group (set, or the no-answer queries) weighs the same in the
	// fit, however many results it has.
	per := map[string]float64{}
	for _, r := range rows {
		per[r.group]++
	}
	fit := func(keep func(calRow) bool, sim, kw, hybrid bool) search.Model {
		var xs [][]float64
		var ys, ws []float64
		for _, r := range rows {
			if !keep(r) {
				continue
			}
			x := []float64{1}
			switch {
			case hybrid: // one feature, similarity + the query's share * keyword
				x = append(x, r.sim+r.share*r.kw)
			case sim:
				x = append(x, r.sim)
			}
			if kw {
				x = append(x, r.kw)
			}
			y := 0.0
			if r.relevant {
				y = 1
			}
			xs, ys, ws = append(xs, x), append(ys, y), append(ws, 1/per[r.group])
		}
		b := logistic(xs, ys, ws)
		m := search.Model{Bias: b[0]}
		switch {
		case hybrid:
			m.Similarity = b[1]
		case sim:
			m.Similarity = b[1]
		case kw:
			m.Keyword = b[1]
		}
		return m
	}
	hybrid := fit(func(r calRow) bool { return r.mode == engine.ModeHybrid && r.hasVec }, true, true, true)
	semantic := fit(func(r calRow) bool { return r.mode == engine.ModeSemantic }, true, false, false)
	keyword := fit(func(r calRow) bool { return r.mode == engine.ModeKeyword }, false, true, false)
	fmt.Println("Fitted calibration (logistic regression, each group weighted equally; hybrid on similarity + the query's keyword share x keyword, so its keyword weight is printed as 0; engine/search/relevance.go):")
	fmt.Println()
	fmt.Println("```go")
	for _, m := range []struct {
		name string
		m    search.Model
	}{{"hybrid", hybrid}, {"semantic", semantic}, {"keyword", keyword}} {
		fmt.Printf("%sBias, %sSimilarity, %sKeyword = %.2f, %.2f, %.2f\n", m.name, m.name, m.name, m.m.Bias, m.m.Similarity, m.m.Keyword)
	}
	fmt.Println("```")
	fmt.Println()
}

// logistic fits weighted logistic regression by Newton's method; x[i][0]
// is the intercept's 1.
func logistic(xs [][]float64, ys, ws []float64) []float64 {
	if len(xs) == 0 {
		return nil
	}
	d := len(xs[0])
	b := make([]float64, d)
	for iter := 0; iter < 50; iter++ {
		g := make([]float64, d)
		h := make([][]float64, d)
		for i := range h {
			h[i] = make([]float64, d)
		}
		for i, x := range xs {
			z := 0.0
			for j := range x {
				z += b[j] * x[j]
			}
			p := 1 / (1 + math.Exp(-z))
			for j := range x {
				g[j] += ws[i] * (ys[i] - p) * x[j]
				for k := range x {
					h[j][k] += ws[i] * p * (1 - p) * x[j] * x[k]
				}
			}
		}
		for j := range h {
			h[j][j] += 1e-9
		}
		step := solve(h, g)
		for j := range b {
			b[j] += step[j]
		}
		if norm(step) < 1e-9 {
			break
		}
	}
	return b
}

// solve solves a x = y by Gaussian elimination (a is small and positive
// definite).
func solve(a [][]float64, y []float64) []float64 {
	n := len(y)
	m := make([][]float64, n)
	for i := range m {
		m[i] = append(append([]float64{}, a[i]...), y[i])
	}
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		m[c], m[p] = m[p], m[c]
		for r := c + 1; r < n; r++ {
			f := m[r][c] / m[c][c]
			for k := c; k <= n; k++ {
				m[r][k] -= f * m[c][k]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := m[r][n]
		for k := r + 1; k < n; k++ {
			s -= m[r][k] * x[k]
		}
		x[r] = s / m[r][r]
	}
	return x
}

func norm(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

// printReliability prints, per mode and relevance bucket, the mean
// relevance the engine gave and the share of results that were relevant
// (hybrid's results without a vector apart).
func printReliability(rows []calRow) {
	type bucket struct{ n, pred, obs float64 }
	edges := []float64{0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0001}
	kinds := []string{"hybrid", "hybrid, no vector", "semantic", "keyword"}
	kindOf := func(r calRow) string {
		if r.mode == engine.ModeHybrid && !r.hasVec {
			return "hybrid, no vector"
		}
		return string(r.mode)
	}
	table := map[string][]bucket{}
	for _, k := range kinds {
		table[k] = make([]bucket, len(edges)-1)
	}
	for _, r := range rows {
		i := sort.SearchFloat64s(edges, r.rel)
		if i >= len(edges) || edges[i] > r.rel {
			i--
		}
		i = min(max(i, 0), len(edges)-2)
		b := &table[kindOf(r)][i]
		b.n++
		b.pred += r.rel
		if r.relevant {
			b.obs++
		}
	}
	fmt.Println("Reliability: results in the first 20 of every query (dev sets and no-answer queries), by the relevance the engine gave them:")
	fmt.Println()
	fmt.Println("| mode | relevance | results | mean predicted | observed relevant |")
	fmt.Println("|---|---|---:|---:|---:|")
	for _, k := range kinds {
		for i, b := range table[k] {
			if b.n == 0 {
				continue
			}
			fmt.Printf("| %s | %.2f-%.2f | %.0f | %.3f | %.3f |\n", k, edges[i], min(edges[i+1], 1), b.n, b.pred/b.n, b.obs/b.n)
		}
	}
	fmt.Println()
}

// printFloor prints, for relevance floors, the share of the relevant
// results hybrid ranks in its top 10 without a floor that the floor keeps
// (per set), and the share of no-answer queries it silences (returns
// nothing for), and the default floor's row.
func printFloor(rows []calRow, queries []calQuery) {
	groups := []string{"Cranfield", "cosqa-dev", "locomo"}
	floors := []float64{0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3}
	if !containsFloat(floors, search.DefaultFloor) {
		floors = append(floors, search.DefaultFloor)
		sort.Float64s(floors)
	}
	fmt.Println("Relevance floor (hybrid search): kept = relevant results of the top 10 (no floor) at or above the floor; silenced = no-answer queries with no result at or above it:")
	fmt.Println()
	fmt.Print("| floor |")
	for _, g := range groups {
		fmt.Printf(" kept %s |", g)
	}
	fmt.Println(" silenced no-answer |")
	fmt.Print("|---:|")
	for range groups {
		fmt.Print("---:|")
	}
	fmt.Println("---:|")
	for _, f := range floors {
		mark := ""
		if f == search.DefaultFloor {
			mark = " (default)"
		}
		fmt.Printf("| %.3g%s |", f, mark)
		for _, g := range groups {
			kept, all := 0, 0
			for _, r := range rows {
				if r.mode == engine.ModeHybrid && r.relevant && r.rank <= 10 && strings.EqualFold(r.group, g) {
					all++
					if search.Kept(r.rel, f) {
						kept++
					}
				}
			}
			fmt.Printf(" %.1f%% of %d |", 100*float64(kept)/float64(max(all, 1)), all)
		}
		silenced, all := 0, 0
		for _, q := range queries {
			if q.noAnswer {
				all++
				if !search.Kept(q.top, f) {
					silenced++
				}
			}
		}
		fmt.Printf(" %.1f%% of %d |\n", 100*float64(silenced)/float64(max(all, 1)), all)
	}
	fmt.Println()
}

func containsFloat(fs []float64, x float64) bool {
	for _, f := range fs {
		if math.Abs(f-x) < 1e-9 {
			return true
		}
	}
	return false
}

// printSides prints hybrid against keyword and semantic search per set
// (nDCG@10) and LoCoMo dev conversation (turn recall@10).
func printSides(units []string, q map[string]map[engine.SearchMode]float64) {
	fmt.Println("Hybrid against its parts (no floor): nDCG@10 per BEIR-style set, turn-level recall@10 per LoCoMo dev conversation:")
	fmt.Println()
	fmt.Println("| unit | metric | keyword | semantic | hybrid | hybrid - better part |")
	fmt.Println("|---|---|---:|---:|---:|---:|")
	for _, u := range units {
		m := q[u]
		metric := "nDCG@10"
		if strings.HasPrefix(u, "locomo") {
			metric = "turn recall@10"
		}
		best := max(m[engine.ModeKeyword], m[engine.ModeSemantic])
		fmt.Printf("| %s | %s | %.3f | %.3f | %.3f | %+.3f |\n", u, metric, m[engine.ModeKeyword], m[engine.ModeSemantic], m[engine.ModeHybrid], m[engine.ModeHybrid]-best)
	}
	fmt.Println()
}

// writeRows writes rows as TSV, for fits and tables made offline.
func writeRows(path string, rows []calRow) error {
	var b strings.Builder
	b.WriteString("group\tunit\tmode\tquery\trank\tsimilarity\tkeyword\thas_vector\trelevance\trelevant\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%d\t%d\t%.6f\t%.6f\t%v\t%.6f\t%v\n", r.group, r.unit, r.mode, r.query, r.rank, r.sim, r.kw, r.hasVec, r.rel, r.relevant)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
