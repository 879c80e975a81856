package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// The store benchmarks share one corpus of benchN messages built from a
// fixed seed on first use (about 1-2 min on 2 cores). With
// CAIRN_BENCH_DIR=DIR the corpus is built in DIR and kept, and a later run
// with the same DIR reuses it (the store benchmark adds to it).
const (
	benchN    = 100_000
	benchSeed = 42
)

type benchCorpus struct {
	e        *engine.Engine
	dir      string
	words    []string
	channels []string
	agents   []string
	projects []string
	now      time.Time
	err      error
}

var (
	benchOnce sync.Once
	bench     benchCorpus
)

func TestMain(m *testing.M) {
	code := m.Run()
	if bench.e != nil {
		bench.e.Close()
		if os.Getenv("CAIRN_BENCH_DIR") == "" {
			os.RemoveAll(bench.dir)
		}
	}
	os.Exit(code)
}

// syllable words: distinct, pronounceable, stable under the porter stemmer.
func benchWords(n int) []string {
	cons := []string{"b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z"}
	vow := []string{"a", "e", "i", "o", "u"}
	var out []string
	for i := 0; len(out) < n; i++ {
		var b strings.Builder
		x := i
		for s := 0; s < 3; s++ {
			b.WriteString(cons[x%len(cons)])
			x /= len(cons)
			b.WriteString(vow[x%len(vow)])
			x /= len(vow)
		}
		b.WriteString("x")
		out = append(out, b.String())
	}
	return out
}

func getBenchCorpus(b *testing.B) *benchCorpus {
	b.Helper()
	benchOnce.Do(func() {
		bench.err = buildBenchCorpus(&bench)
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	return &bench
}

func buildBenchCorpus(c *benchCorpus) error {
	ctx := context.Background()
	start := time.Now()
	rng := rand.New(rand.NewPCG(benchSeed, 0))
	c.now = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	dir := os.Getenv("CAIRN_BENCH_DIR")
	_, statErr := os.Stat(filepath.Join(dir, sqlite.DBFile))
	reuse := dir != "" && statErr == nil
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "cairn-bench-"); err != nil {
			return err
		}
	}
	c.dir = dir
	now := c.now
	var err error
	var mu sync.Mutex
	c.e, err = enginetest.OpenEngine(ctx, dir, engine.Options{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); now = now.Add(time.Millisecond); return now }})
	if err != nil {
		return err
	}
	c.words = benchWords(5000)
	zipf := rand.NewZipf(rng, 1.07, 2, uint64(len(c.words)-1))
	for i := range 20 {
		c.agents = append(c.agents, fmt.Sprintf("agent%02d", i))
	}
	for i := range 5 {
		c.projects = append(c.projects, fmt.Sprintf("proj%d", i))
	}
	for _, a := range c.agents {
		for _, p := range c.projects {
			c.channels = append(c.channels, engine.NotesChannelID(a, p))
		}
	}
	for _, p := range c.projects {
		for _, n := range engine.ProjectChannelNames() {
			c.channels = append(c.channels, engine.ProjectChannelID(p, n))
		}
	}
	for i := range 10 {
		id := fmt.Sprintf("team%d", i)
		c.channels = append(c.channels, id)
		if reuse {
			continue
		}
		if _, err := c.e.CreateChannel(ctx, engine.NewChannel{ID: id}); err != nil {
			return err
		}
	}
	if reuse {
		return nil
	}
	types := []string{"reflection", "decision", "pattern", "policy", "message"}
	const batch = 5000
	span := 90 * 24 * time.Hour
	for i := 0; i < benchN; i += batch {
		msgs := make([]engine.NewMessage, 0, batch)
		for j := i; j < i+batch && j < benchN; j++ {
			n := 15 + rng.IntN(50)
			ws := make([]string, n)
			for k := range ws {
				ws[k] = c.words[zipf.Uint64()]
			}
			conf := float64(rng.IntN(101)) / 100
			ch := c.channels[rng.IntN(len(c.channels))]
			sender := c.agents[rng.IntN(len(c.agents))]
			project := c.projects[rng.IntN(len(c.projects))]
			if strings.HasPrefix(ch, "agent-notes:") {
				parts := strings.Split(ch, ":")
				sender, project = parts[1], parts[2]
			}
			msgs = append(msgs, engine.NewMessage{
				Channel: ch, Sender: sender, Project: project,
				Content:    fmt.Sprintf("%s (%d)", strings.Join(ws, " "), j),
				Confidence: &conf, Type: types[rng.IntN(len(types))],
				CreatedAt: c.now.Add(-span + time.Duration(j)*(span/benchN)),
			})
		}
		if _, err := c.e.StoreMessages(ctx, msgs); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "bench corpus: %d messages in %s\n", benchN, time.Since(start).Round(time.Millisecond))
	return nil
}

func reportMS(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
}

func BenchmarkStoreMessage(b *testing.B) {
	c := getBenchCorpus(b)
	ctx := context.Background()
	b.Run(fmt.Sprintf("n=%d", benchN), func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			_, err := c.e.StoreMessage(ctx, engine.NewMessage{Channel: "team0", Sender: "agent00", Project: "proj0",
				Content: fmt.Sprintf("bench store %d %s %s", i, c.words[i%len(c.words)], time.Now())})
			if err != nil {
				b.Fatal(err)
			}
		}
		reportMS(b)
	})
}

func BenchmarkChannelRead(b *testing.B) {
	c := getBenchCorpus(b)
	ctx := context.Background()
	b.Run(fmt.Sprintf("n=%d/limit=50", benchN), func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			ms, err := c.e.GetChannelMessages(ctx, c.channels[i%len(c.channels)], 0, 50)
			if err != nil || len(ms) != 50 {
				b.Fatalf("%d messages, %v", len(ms), err)
			}
		}
		reportMS(b)
	})
}

func benchFilters(c *benchCorpus) []struct {
	name string
	f    engine.Filter
} {
	return []struct {
		name string
		f    engine.Filter
	}{
		{"none", engine.Filter{}},
		{"channel", engine.Filter{ChannelIDs: []string{c.channels[3]}}},
		{"sender+min-confidence", engine.Filter{SenderIDs: []string{c.agents[1]}, MinConfidence: 0.5}},
		{"project+type+since", engine.Filter{Project: c.projects[2], MessageTypes: []string{"decision", "policy"}, Since: c.now.Add(-30 * 24 * time.Hour)}},
		{"exclude-sender+min-confidence", engine.Filter{ExcludeSender: c.agents[0], MinConfidence: 0.9}},
	}
}

func BenchmarkKeywordSearch(b *testing.B) {
	c := getBenchCorpus(b)
	ctx := context.Background()
	// Queries of 1-3 words: "common" words rank 20-100 in the Zipf
	// vocabulary (each in 5-20% of messages, like "the" or "use"); "typical"
	// words rank 100-2000 (each in 0.3-5% of messages).
	mixes := []struct {
		name    string
		lo, hi  int
		queries []string
	}{{name: "common", lo: 20, hi: 100}, {name: "typical", lo: 100, hi: 2000}}
	rng := rand.New(rand.NewPCG(benchSeed, 1))
	for m := range mixes {
		for range 64 {
			n := 1 + rng.IntN(3)
			ws := make([]string, n)
			for k := range ws {
				ws[k] = c.words[mixes[m].lo+rng.IntN(mixes[m].hi-mixes[m].lo)]
			}
			mixes[m].queries = append(mixes[m].queries, strings.Join(ws, " "))
		}
	}
	for _, mix := range mixes {
		for _, fl := range benchFilters(c) {
			b.Run(fmt.Sprintf("n=%d/top=20/terms=%s/filter=%s", benchN, mix.name, fl.name), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					i++
					if _, err := c.e.Search(ctx, engine.SearchRequest{Query: mix.queries[i%len(mix.queries)], Filter: fl.f, Limit: 20}); err != nil {
						b.Fatal(err)
					}
				}
				reportMS(b)
			})
		}
	}
}

func BenchmarkListing(b *testing.B) {
	c := getBenchCorpus(b)
	ctx := context.Background()
	for _, fl := range benchFilters(c) {
		b.Run(fmt.Sprintf("n=%d/top=20/filter=%s", benchN, fl.name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.e.Search(ctx, engine.SearchRequest{Filter: fl.f, Limit: 20}); err != nil {
					b.Fatal(err)
				}
			}
			reportMS(b)
		})
	}
}

// BenchmarkUnread lists the oldest 50 unread messages and counts them all,
// for an agent that read nothing (every message unread) and for one whose
// cursor over everything is 100 messages from the end.
func BenchmarkUnread(b *testing.B) {
	c := getBenchCorpus(b)
	ctx := context.Background()
	st, err := ops.StoreStats(ctx, c.e)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.e.MarkRead(ctx, engine.MarkReadRequest{Agent: "caught-up", UpTo: st.Messages - 100}); err != nil {
		b.Fatal(err)
	}
	for _, agent := range []string{"new-reader", "caught-up"} {
		b.Run(fmt.Sprintf("n=%d/agent=%s", benchN, agent), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.e.Unread(ctx, engine.UnreadRequest{Agent: agent, Limit: 50}); err != nil {
					b.Fatal(err)
				}
			}
			reportMS(b)
		})
	}
}
