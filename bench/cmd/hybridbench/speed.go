package main

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/embed/builtin"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// gateFailure lists failed gates; main exits 1 with it.
type gateFailure []string

func (g gateFailure) Error() string {
	return "bench-gate FAILED:\n  " + strings.Join(g, "\n  ")
}

// synthEmbedder is the speed suite's stand-in model (NOT a language
// model): a message's vector is the normalized sum of fixed pseudo-random
// vectors of its words, so vectors cluster like real ones and the cost is
// microseconds. It makes the suite measure cairn, not the encoder; the
// encoder is measured separately with -model.
type synthEmbedder struct {
	dim   int
	words map[string][]float32
}

func (s *synthEmbedder) Dim() int        { return s.dim }
func (s *synthEmbedder) ModelID() string { return fmt.Sprintf("synthetic-bow-%d", s.dim) }
func (s *synthEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, s.dim)
		for _, w := range strings.Fields(t) {
			wv := s.words[w]
			if wv == nil {
				h := fnv.New64a()
				h.Write([]byte(w))
				r := rand.New(rand.NewPCG(h.Sum64(), 3))
				wv = make([]float32, s.dim)
				for j := range wv {
					wv[j] = float32(r.NormFloat64())
				}
			}
			for j := range v {
				v[j] += wv[j]
			}
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		n = math.Sqrt(n)
		if n == 0 {
			n, v[0] = 1, 1
		}
		for j := range v {
			v[j] = float32(float64(v[j]) / n)
		}
		out[i] = v
	}
	return out, nil
}

func newSynth(dim int, vocab []string) *synthEmbedder {
	s := &synthEmbedder{dim: dim, words: map[string][]float32{}}
	for _, w := range vocab {
		v, _ := (&synthEmbedder{dim: dim}).Embed(context.Background(), []string{w})
		s.words[w] = v[0]
	}
	return s
}

type corpusGen struct {
	r     *rand.Rand
	vocab []string
	zipf  *rand.Zipf
	start time.Time
}

func newGen(seed uint64) *corpusGen {
	r := rand.New(rand.NewPCG(seed, 1))
	g := &corpusGen{r: r, start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	syll := []string{"ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "ve", "zu", "an", "or", "el", "is", "um"}
	seen := map[string]bool{}
	for len(g.vocab) < 5000 {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			g.vocab = append(g.vocab, w)
		}
	}
	g.zipf = rand.NewZipf(r, 1.1, 2, uint64(len(g.vocab)-1))
	return g
}

func (g *corpusGen) text(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = g.vocab[g.zipf.Uint64()]
	}
	return strings.Join(ws, " ")
}

// message i: 10 plain channels (10% each), 20 senders, 90 days of history.
func (g *corpusGen) message(i int) engine.NewMessage {
	conf := float64(g.r.IntN(101)) / 100
	return engine.NewMessage{
		Channel: fmt.Sprintf("c%d", i%10), Sender: fmt.Sprintf("agent%d", g.r.IntN(20)), Project: []string{"", "cairn", "web"}[g.r.IntN(3)],
		Content: g.text(8+g.r.IntN(32)) + fmt.Sprintf(" n%d", i), Confidence: &conf, Type: []string{"message", "decision", "pattern"}[g.r.IntN(3)],
		CreatedAt: g.start.Add(time.Duration(g.r.IntN(90*24*3600)) * time.Second),
	}
}

type lat []time.Duration

func (l lat) pct(p float64) time.Duration {
	s := slices.Clone(l)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(math.Ceil(p*float64(len(s))))-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// runSpeed measures the speed gates: batch and single writes, the model
// arriving (backfill and embedding), queries, then the real encoder.
//
// It is long because it is one benchmark script: its numbered phases share
// the engine, the corpus and the timings they print, in the order they run.
func runSpeed(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("speed", flag.ExitOnError)
	n := fs.Int("n", 100000, "messages")
	dim := fs.Int("dim", 384, "vector dimension of the synthetic embedder")
	queries := fs.Int("queries", 200, "queries per measurement")
	model := fs.String("model", "", "embedding model `DIR` for the encoder measurements (e.g. the MiniLM-shaped test model); empty skips them")
	gate := fs.Bool("gate", false, "exit 1 when a gate fails")
	writeProfile := fs.String("write-cpuprofile", "", "write a CPU profile of the first batch-write phase to `FILE`")
	seed := fs.Uint64("seed", 1, "corpus seed")
	fs.Parse(args)

	dir, err := os.MkdirTemp("", "hybridbench-speed-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Printf("# hybrid search speed, n=%d dim=%d, %s, %s %s/%s, %d CPUs, GOMAXPROCS %d\n\n", *n, *dim, time.Now().UTC().Format(time.RFC3339), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0))
	g := newGen(*seed)
	var fails gateFailure
	check := func(name string, ok bool, figure, limit string) {
		status := "ok"
		if !ok {
			status = "FAIL"
			fails = append(fails, fmt.Sprintf("%s: %s, limit %s", name, figure, limit))
		}
		fmt.Printf("| gate | %s | %s | %s | %s |\n", name, figure, limit, status)
	}
	aim := func(name string, ok bool, figure, limit string) {
		status := "met"
		if !ok {
			status = "MISSED"
		}
		fmt.Printf("| aim | %s | %s | %s | %s |\n", name, figure, limit, status)
	}
	fmt.Println("| kind | measurement | figure | limit | status |\n|---|---|---|---|---|")

	// 1. Batch writes, keyword only (no embedder, no outbox rows).
	e, err := sqlite.OpenEngine(ctx, dir, engine.Options{}, sqlite.Options{})
	if err != nil {
		return err
	}
	for c := range 10 {
		if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: fmt.Sprintf("c%d", c)}); err != nil {
			return err
		}
	}
	msgs := make([]engine.NewMessage, *n)
	for i := range msgs {
		msgs[i] = g.message(i)
	}
	half := *n / 2
	if *writeProfile != "" {
		f, err := os.Create(*writeProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	t0, c0 := time.Now(), cpuTime()
	for i := 0; i < half; i += 1000 {
		if _, err := e.StoreMessages(ctx, msgs[i:min(i+1000, half)]); err != nil {
			return err
		}
	}
	kwRate := float64(half) / time.Since(t0).Seconds()
	if *writeProfile != "" {
		pprof.StopCPUProfile()
	}
	fmt.Printf("| figure | StoreMessages, batches of 1000, no embedder (%d msgs) | %.0f msgs/s wall, %.0f msgs per CPU-second | | |\n", half, kwRate, float64(half)/(cpuTime()-c0).Seconds())
	// Single writes without outbox rows.
	var single0 lat
	for i := range 100 {
		m := g.message(*n + i)
		t := time.Now()
		if _, err := e.StoreMessage(ctx, m); err != nil {
			return err
		}
		single0 = append(single0, time.Since(t))
	}
	e.Close()

	// 2. The model appears: the outbox is filled for every stored message,
	// the rest is written with outbox rows, and everything is embedded.
	synth := newSynth(*dim, g.vocab)
	emb := &benchEmbedder{synthEmbedder: synth}
	e, err = sqlite.OpenEngine(ctx, dir, engine.Options{Embedder: emb}, sqlite.Options{})
	if err != nil {
		return err
	}
	defer e.Close()
	// Stop the background worker's competition for the measurement: it
	// drains the backfill outbox concurrently; measure the writes alone
	// by CPU time of this process as well as wall time.
	t0 = time.Now()
	for i := half; i < *n; i += 1000 {
		if _, err := e.StoreMessages(ctx, msgs[i:min(i+1000, *n)]); err != nil {
			return err
		}
	}
	wall := time.Since(t0)
	dualRate := float64(*n-half) / wall.Seconds()
	fmt.Printf("| figure | StoreMessages, batches of 1000, with outbox rows, worker embedding meanwhile (%d msgs) | %.0f msgs/s wall | | |\n", *n-half, dualRate)
	check("batch write throughput excluding embedding (keyword-only engine, wall)", kwRate >= 5000, fmt.Sprintf("%.0f msgs/s", kwRate), ">= 5000 msgs/s")
	var single1 lat
	for i := range 100 {
		m := g.message(*n + 100 + i)
		t := time.Now()
		if _, err := e.StoreMessage(ctx, m); err != nil {
			return err
		}
		single1 = append(single1, time.Since(t))
	}
	fmt.Printf("| figure | StoreMessage p50/p95, no vectors | %s / %s | | |\n", ms(single0.pct(.5)), ms(single0.pct(.95)))
	fmt.Printf("| figure | StoreMessage p50/p95, with outbox row | %s / %s | | |\n", ms(single1.pct(.5)), ms(single1.pct(.95)))
	check("dual-write overhead (p95 with outbox row)", single1.pct(.95) < 30*time.Millisecond, ms(single1.pct(.95)), "< 30 ms (design)")

	var texts []string
	for i := range 2000 {
		texts = append(texts, msgs[i].Content)
	}
	t0 = time.Now()
	if _, err := synth.Embed(ctx, texts); err != nil {
		return err
	}
	synthRate := 2000 / time.Since(t0).Seconds()
	t0 = time.Now()
	var last engine.Progress
	if err := ops.SyncVectors(ctx, e, func(p engine.Progress) { last = p }); err != nil {
		return err
	}
	vecDur := time.Since(t0)
	vecRate := float64(last.Done) / vecDur.Seconds()
	fmt.Printf("| figure | outbox drain: embed (synthetic, %.0f texts/s alone) + vecstore upsert, %d vectors | %.0f vectors/s (%.1f s) | | |\n", synthRate, last.Done, vecRate, vecDur.Seconds())

	// 3. Queries.
	// Queries are 2-4 content words (vocabulary ranks 50..5000, uniform);
	// "common" queries add one of the 10 most frequent words (a term in
	// about a quarter to all of the messages: FTS5 scores every row that
	// holds it unless pruned, see fts.Table.PruneFrequent).
	var qs, common []string
	for range *queries {
		var ws []string
		for range 2 + g.r.IntN(3) {
			ws = append(ws, g.vocab[50+g.r.IntN(len(g.vocab)-50)])
		}
		qs = append(qs, strings.Join(ws, " "))
		common = append(common, strings.Join(ws, " ")+" "+g.vocab[g.r.IntN(10)])
	}
	measure := func(req engine.SearchRequest, withQuery bool, qs []string) (lat, error) {
		var l lat
		for i, q := range qs {
			r := req
			if withQuery {
				r.Query = q
			}
			_ = i
			t := time.Now()
			if _, err := e.Search(ctx, r); err != nil {
				return nil, err
			}
			l = append(l, time.Since(t))
		}
		return l, nil
	}
	var embedLat lat
	for _, q := range qs {
		t := time.Now()
		synth.Embed(ctx, []string{q})
		embedLat = append(embedLat, time.Since(t))
	}
	ten := engine.Filter{ChannelIDs: []string{"c3"}}
	cases := []struct {
		name   string
		req    engine.SearchRequest
		q      bool
		common bool
	}{
		{"keyword top 20, query with a very common word", engine.SearchRequest{Mode: engine.ModeKeyword, Limit: 20}, true, true},
		{"hybrid top 20, query with a very common word", engine.SearchRequest{Limit: 20}, true, true},
		{"keyword top 20", engine.SearchRequest{Mode: engine.ModeKeyword, Limit: 20}, true, false},
		{"keyword top 20, 10% filter", engine.SearchRequest{Mode: engine.ModeKeyword, Limit: 20, Filter: ten}, true, false},
		{"semantic top 20", engine.SearchRequest{Mode: engine.ModeSemantic, Limit: 20}, true, false},
		{"semantic top 20, 10% filter", engine.SearchRequest{Mode: engine.ModeSemantic, Limit: 20, Filter: ten}, true, false},
		{"hybrid top 20", engine.SearchRequest{Limit: 20}, true, false},
		{"hybrid top 20, 10% filter", engine.SearchRequest{Limit: 20, Filter: ten}, true, false},
		{"hybrid top 20, 10% filter, balanced profile", engine.SearchRequest{Limit: 20, Filter: ten, Ranking: engine.Ranking{Profile: "balanced"}}, true, false},
		{"hybrid top 20, where {confidence >= 0.9}", engine.SearchRequest{Limit: 20, Filter: engine.Filter{Where: []byte(`{"confidence": {"$gte": 0.9}}`)}}, true, false},
		{"filter-only listing 50, 10% filter", engine.SearchRequest{Limit: 50, Filter: ten}, false, false},
	}
	res := map[string]lat{}
	for _, c := range cases {
		qq := qs
		if c.common {
			qq = common
		}
		l, err := measure(c.req, c.q, qq)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		res[c.name] = l
		fmt.Printf("| figure | %s p50/p95 (incl. synthetic query embedding) | %s / %s | | |\n", c.name, ms(l.pct(.5)), ms(l.pct(.95)))
	}
	var read50 lat
	for range *queries {
		t := time.Now()
		if _, err := e.GetChannelMessages(ctx, "c3", 0, 50); err != nil {
			return err
		}
		read50 = append(read50, time.Since(t))
	}
	fmt.Printf("| figure | read 50 messages of a channel p50/p95 | %s / %s | | |\n", ms(read50.pct(.5)), ms(read50.pct(.95)))
	fmt.Printf("| figure | synthetic query embedding p50/p95 | %s / %s | | |\n", ms(embedLat.pct(.5)), ms(embedLat.pct(.95)))

	emb95 := embedLat.pct(.95)
	sem := res["semantic top 20"].pct(.95) - emb95
	hyb := res["hybrid top 20"].pct(.95) - emb95
	hyb10 := res["hybrid top 20, 10% filter"].pct(.95) - emb95
	// The design's absolute targets are gated on p50 (a shared 2-core
	// machine makes tails noisy); p95 figures are printed above.
	sem50x := res["semantic top 20"].pct(.5)
	check("semantic search p50", sem50x < 50*time.Millisecond, ms(sem50x), "< 50 ms (design)")
	check("read 50 messages p50", read50.pct(.5) < 20*time.Millisecond, ms(read50.pct(.5)), "< 20 ms (design)")
	check("filter-only listing p50", res["filter-only listing 50, 10% filter"].pct(.5) < 20*time.Millisecond, ms(res["filter-only listing 50, 10% filter"].pct(.5)), "< 20 ms (design)")
	check("hybrid search p50 excl. query embedding", res["hybrid top 20"].pct(.5) < 100*time.Millisecond, ms(res["hybrid top 20"].pct(.5)), "< 100 ms (design, combined)")
	aim("semantic p95 excl. query embedding", sem < 50*time.Millisecond, ms(sem), "< 50 ms")
	aim("hybrid p95 excl. query embedding", hyb <= 10*time.Millisecond, ms(hyb), "<= 10 ms (issue aim)")
	aim("hybrid p95 excl. query embedding, 10% filter", hyb10 <= 10*time.Millisecond, ms(hyb10), "<= 10 ms (issue aim)")
	kw50, sem50, hyb50 := res["keyword top 20"].pct(.5), res["semantic top 20"].pct(.5), res["hybrid top 20"].pct(.5)
	check("ratio: hybrid p50 vs keyword p50 + semantic p50", hyb50 <= 2*(kw50+sem50), fmt.Sprintf("%s vs %s", ms(hyb50), ms(kw50+sem50)), "<= 2x")
	h10 := res["hybrid top 20, 10% filter"].pct(.5)
	check("ratio: hybrid p50 at 10% filter vs unfiltered", h10 <= 3*hyb50+2*time.Millisecond, fmt.Sprintf("%s vs %s", ms(h10), ms(hyb50)), "<= 3x + 2 ms")

	// 3b. A question as an agent asks it: hybrid search embedding it with
	// the built-in model (bench/cmd/hybridbench/latencygate.go).
	if err := questionLatencyGate(ctx, e, emb, g, *queries, check); err != nil {
		return err
	}

	// 4. The real encoder (random weights: speed only).
	if *model != "" {
		if err := encoderSpeed(ctx, *model, msgs[:600], res["hybrid top 20"].pct(.95)-emb95, check); err != nil {
			return err
		}
	}
	if rep, err := ops.Consistency(ctx, e); err != nil || !rep.OK() {
		return fmt.Errorf("consistency after the suite: %v %v", err, rep.Problems)
	}
	fmt.Println("\nconsistency check after the suite: ok")
	if *gate && len(fails) > 0 {
		return fails
	}
	return nil
}

// openSpeedModel opens the model in dir ("builtin": the model compiled
// into the binary) with its cache off, so that every text is encoded.
func openSpeedModel(ctx context.Context, dir string) (*embed.Model, error) {
	if dir == "builtin" {
		return builtin.Open(ctx, embed.Options{CacheSize: -1})
	}
	return embed.Open(ctx, dir, embed.Options{CacheSize: -1})
}

// encoderSpeed measures the encoder alone and the write pipeline with it:
// with the encoder, it should be the only bottleneck.
func encoderSpeed(ctx context.Context, modelDir string, msgs []engine.NewMessage, hybrid95 time.Duration, check func(string, bool, string, string)) error {
	m, err := openSpeedModel(ctx, modelDir)
	if err != nil {
		return err
	}
	defer m.Close()
	texts := make([]string, len(msgs))
	for i, x := range msgs {
		texts[i] = x.Content
	}
	t0 := time.Now()
	for i := 0; i < len(texts); i += 64 {
		if _, err := m.Embed(ctx, texts[i:min(i+64, len(texts))]); err != nil {
			return err
		}
	}
	raw := float64(len(texts)) / time.Since(t0).Seconds()
	var ql lat
	for i := range 50 {
		t := time.Now()
		if _, err := m.Embed(ctx, []string{fmt.Sprintf("query number %d about %s", i, texts[i][:min(40, len(texts[i]))])}); err != nil {
			return err
		}
		ql = append(ql, time.Since(t))
	}
	dir, err := os.MkdirTemp("", "hybridbench-enc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	m2, err := openSpeedModel(ctx, modelDir)
	if err != nil {
		return err
	}
	defer m2.Close()
	e, err := sqlite.OpenEngine(ctx, dir, engine.Options{Embedder: m2}, sqlite.Options{})
	if err != nil {
		return err
	}
	defer e.Close()
	for c := range 10 {
		e.CreateChannel(ctx, engine.NewChannel{ID: fmt.Sprintf("c%d", c)})
	}
	t0 = time.Now()
	if _, err := e.StoreMessages(ctx, msgs); err != nil {
		return err
	}
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		return err
	}
	pipe := float64(len(msgs)) / time.Since(t0).Seconds()
	fmt.Printf("| figure | encoder %s alone, batches of 64 (%d texts, 9-40 words) | %.0f texts/s | | |\n", m.ModelID()[:min(30, len(m.ModelID()))], len(texts), raw)
	fmt.Printf("| figure | write pipeline with that encoder (store + outbox + embed + vecstore) | %.0f msgs/s | | |\n", pipe)
	fmt.Printf("| figure | query embedding p50/p95 | %s / %s | | |\n", ms(ql.pct(.5)), ms(ql.pct(.95)))
	check("batch embedding rate", pipe > 100, fmt.Sprintf("%.0f msgs/s", pipe), "> 100 msgs/s (design)")
	check("ratio: pipeline vs encoder alone (encoder is the bottleneck)", pipe >= 0.7*raw, fmt.Sprintf("%.0f vs %.0f", pipe, raw), ">= 0.7x")
	check("combined search p95 incl. query embedding", hybrid95+ql.pct(.95) < 100*time.Millisecond, ms(hybrid95+ql.pct(.95)), "< 100 ms (design)")
	return nil
}

// cpuTime is this process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
