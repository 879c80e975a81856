package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
)

// questionLatencyGate measures what an agent waits for when it asks its
// memory a question: one engine search (hybrid, limit 10) over the suite's
// corpus whose own embedder embeds the question with the built-in model,
// through the default query analysis (sender names, time expressions,
// question weight, turn context, rank blend), with the vector side
// running beside the keyword side as it does for every caller. It first
// adds 1,000 exchanges (a question from one agent, the reply from another
// a minute later) so that the steps that read a conversation have turns
// to read, and asks each query in the words of one of them.
//
// The corpus's vectors are the synthetic embedder's (embedding 100,000
// messages with the real encoder takes hours on 2 cores); queries switch
// to the built-in model (same dimension) once the corpus is in, so the
// results mean nothing and the timing is the real path's. The gate is the
// p95 of the whole search call; the built-in model's embedding time alone
// and the search's time with the synthetic embedding (as before the
// switch) are reported beside it.
func questionLatencyGate(ctx context.Context, e *engine.Engine, emb *benchEmbedder, g *corpusGen, queries int, check func(string, bool, string, string)) error {
	const exchanges = 1000
	var in []engine.NewMessage
	var asked []string
	for i := range exchanges {
		at := g.start.Add(time.Duration(g.r.IntN(90*24*3600)) * time.Second)
		ch := fmt.Sprintf("c%d", i%10)
		q := g.text(6+g.r.IntN(6)) + "?"
		asked = append(asked, q)
		in = append(in,
			engine.NewMessage{Channel: ch, Sender: fmt.Sprintf("agent%d", i%20), Content: q, CreatedAt: at},
			engine.NewMessage{Channel: ch, Sender: fmt.Sprintf("agent%d", (i+1)%20), Content: g.text(8+g.r.IntN(20)) + fmt.Sprintf(" r%d", i), CreatedAt: at.Add(time.Minute)})
	}
	if _, err := e.StoreMessages(ctx, in); err != nil {
		return err
	}
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		return err
	}
	m, err := openSpeedModel(ctx, "builtin")
	if err != nil {
		return err
	}
	defer m.Close()
	if m.Dim() != emb.Dim() {
		return fmt.Errorf("question gate: the built-in model's dimension %d is not the corpus's %d (-dim)", m.Dim(), emb.Dim())
	}
	qs := make([]string, queries)
	for i := range qs {
		words := strings.Fields(strings.TrimSuffix(asked[i%len(asked)], "?"))
		qs[i] = "What did we decide about " + strings.Join(words[:min(4, len(words))], " ") + " last week?"
	}
	req := engine.SearchRequest{Limit: 10}
	search := func(q string) (time.Duration, error) {
		r := req
		r.Query = q
		t0 := time.Now()
		_, err := e.Search(ctx, r)
		return time.Since(t0), err
	}
	// The search with the synthetic query embedding (microseconds): what
	// the engine adds to the model's time.
	searchLat, err := timeEach(qs, search)
	if err != nil {
		return err
	}
	embedLat, err := timeEach(qs, func(q string) (time.Duration, error) {
		t0 := time.Now()
		_, err := m.Embed(ctx, []string{q})
		return time.Since(t0), err
	})
	if err != nil {
		return err
	}
	emb.queriesWith(m)
	defer emb.queriesWith(nil)
	load0, c0 := loadAverage(), cpuTime()
	total, err := timeEach(qs, search)
	if err != nil {
		return err
	}
	cpu := (cpuTime() - c0) / time.Duration(len(qs))
	fmt.Printf("| figure | question, built-in model query embedding alone p50/p95 | %s / %s | | |\n", ms(embedLat.pct(.5)), ms(embedLat.pct(.95)))
	fmt.Printf("| figure | question, hybrid search top 10 with the synthetic query embedding p50/p95 (with %d exchanges added) | %s / %s | | |\n", exchanges, ms(searchLat.pct(.5)), ms(searchLat.pct(.95)))
	fmt.Printf("| figure | question, hybrid search top 10 embedding with the built-in model p50/p95; process CPU per search | %s / %s; %s | | |\n", ms(total.pct(.5)), ms(total.pct(.95)), ms(cpu))
	fmt.Printf("| figure | load average (1 min) before / after the timed searches | %s / %s | | |\n", load0, loadAverage())
	check("hybrid search p95 incl. the built-in model's query embedding (questions, limit 10)", total.pct(.95) <= 15*time.Millisecond, ms(total.pct(.95)), "<= 15 ms (issue)")
	return nil
}

// benchEmbedder is the speed suite's engine embedder: the synthetic one,
// until queriesWith gives it a model for the queries of the question gate
// (the corpus is in by then; the outbox is empty, so only queries are
// embedded). The model id stays the synthetic one's, which the stored
// vectors carry.
type benchEmbedder struct {
	*synthEmbedder
	queries atomic.Pointer[embed.Model]
}

func (b *benchEmbedder) queriesWith(m *embed.Model) { b.queries.Store(m) }

func (b *benchEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if m := b.queries.Load(); m != nil {
		return m.Embed(ctx, texts)
	}
	return b.synthEmbedder.Embed(ctx, texts)
}

// timeEach times f once for each query, in order.
func timeEach(qs []string, f func(string) (time.Duration, error)) (lat, error) {
	var l lat
	for _, q := range qs {
		d, err := f(q)
		if err != nil {
			return nil, err
		}
		l = append(l, d)
	}
	return l, nil
}

// loadAverage is the 1-minute load average ("?" when unknown): the machine
// may be shared, which the latency figures depend on.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
