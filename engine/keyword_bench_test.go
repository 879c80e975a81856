package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode"
	"unsafe"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// The keyword CPU benchmark compares FTS5 (bm25() over every matching row)
// with the in-memory index (engine/sqlite/keyword_index.go) in the same run, on
// two corpora of 100,000 messages: the synthetic store corpus and a
// realistic one recombined from the Cranfield and CoSQA dev texts. It
// reports CPU time per query, which a loaded machine distorts far less
// than wall time:
//
//	cpu-ms/op   process CPU (user+system, every thread, GC included) / queries
//	p50/p95-cpu-ms  the calling thread's CPU per query (locked to its thread)
//
// Run: CAIRN_BENCH_DIR=/tmp/cairnbench go test -run '^$' -bench KeywordCPU -benchtime 100x -cpu 1 ./engine/
// (the realistic corpus is kept in $CAIRN_BENCH_DIR-realistic).

func cpuNow(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID,
// nanosecond precision; rusage is tick-sampled per thread).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3 /* CLOCK_THREAD_CPUTIME_ID */, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

type realCorpus struct {
	e        *engine.Engine
	channels []string
	senders  []string
	dataset  []string // dev-set queries
	agent    []string // agent-style queries with common words
	err      error
}

var (
	realOnce sync.Once
	real     realCorpus
)

// devDocs reads the dev datasets' texts and queries (nil when absent).
func devDocs() (docs, queries []string) {
	base := filepath.Join("..", "..", "shared", "datasets")
	read := func(p string, into *[]string) {
		f, err := os.Open(filepath.Join(base, p))
		if err != nil {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<22)
		for sc.Scan() {
			var d struct{ Title, Text string }
			if json.Unmarshal(sc.Bytes(), &d) == nil && strings.TrimSpace(d.Title+d.Text) != "" {
				*into = append(*into, strings.TrimSpace(d.Title+" "+d.Text))
			}
		}
	}
	read("cranfield/corpus.jsonl", &docs)
	read("cosqa/dev/corpus.jsonl", &docs)
	read("cranfield/queries.jsonl", &queries)
	read("cosqa/dev/queries.jsonl", &queries)
	return docs, queries
}

// buildRealCorpus stores 100,000 messages, each 1-3 random passages of
// 8-60 words cut from the dev documents, with about 5% of the words
// replaced by words drawn from the corpus's own Zipfian word distribution
// (seeded), in 10 channels, 20 senders and 90 days.
func buildRealCorpus(c *realCorpus) error {
	ctx := context.Background()
	docs, queries := devDocs()
	if len(docs) == 0 {
		return fmt.Errorf("dev datasets not found")
	}
	rng := rand.New(rand.NewPCG(benchSeed, 7))
	dir := os.Getenv("CAIRN_BENCH_DIR")
	if dir != "" {
		dir += "-realistic"
	} else {
		var err error
		if dir, err = os.MkdirTemp("", "cairn-kwbench-"); err != nil {
			return err
		}
	}
	_, statErr := os.Stat(filepath.Join(dir, sqlite.DBFile))
	reuse := statErr == nil
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var err error
	c.e, err = enginetest.OpenEngine(ctx, dir, engine.Options{Now: func() time.Time { return now }})
	if err != nil {
		return err
	}
	for i := range 10 {
		c.channels = append(c.channels, fmt.Sprintf("team%d", i))
	}
	for i := range 20 {
		c.senders = append(c.senders, fmt.Sprintf("agent%02d", i))
	}
	words := make([][]string, len(docs))
	freq := map[string]int{}
	for i, d := range docs {
		words[i] = strings.Fields(d)
		for _, w := range words[i] {
			freq[strings.ToLower(strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))]++
		}
	}
	vocab := make([]string, 0, len(freq))
	for w := range freq {
		if w != "" {
			vocab = append(vocab, w)
		}
	}
	slices.SortFunc(vocab, func(a, b string) int {
		if freq[a] != freq[b] {
			return freq[b] - freq[a]
		}
		return strings.Compare(a, b)
	})
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))

	// Queries: the dev-set queries, and agent-style questions mixing very
	// common words with one or two content words.
	for _, i := range rng.Perm(len(queries))[:min(200, len(queries))] {
		c.dataset = append(c.dataset, queries[i])
	}
	templates := []string{"how do I %s the %s", "what did we decide about the %s %s", "why is the %s not %s", "%s %s error in the build",
		"notes on %s and %s", "where is the %s for %s", "is there a %s to %s it", "the %s of the %s"}
	for range 200 {
		a, b := vocab[20+rng.IntN(3000)], vocab[20+rng.IntN(3000)]
		c.agent = append(c.agent, fmt.Sprintf(templates[rng.IntN(len(templates))], a, b))
	}
	if reuse {
		return nil
	}
	if _, err := c.e.CreateChannel(ctx, engine.NewChannel{ID: c.channels[0]}); err != nil {
		return err
	}
	for _, ch := range c.channels[1:] {
		if _, err := c.e.CreateChannel(ctx, engine.NewChannel{ID: ch}); err != nil {
			return err
		}
	}
	start := time.Now()
	span := 90 * 24 * time.Hour
	for i := 0; i < benchN; i += 5000 {
		msgs := make([]engine.NewMessage, 0, 5000)
		for j := i; j < i+5000; j++ {
			var parts []string
			for range 1 + rng.IntN(3) {
				ws := words[rng.IntN(len(words))]
				n := min(len(ws), 8+rng.IntN(53))
				off := rng.IntN(len(ws) - n + 1)
				seg := slices.Clone(ws[off : off+n])
				for k := range seg {
					if rng.IntN(20) == 0 {
						seg[k] = vocab[zipf.Uint64()]
					}
				}
				parts = append(parts, strings.Join(seg, " "))
			}
			conf := float64(rng.IntN(101)) / 100
			msgs = append(msgs, engine.NewMessage{
				Channel: c.channels[rng.IntN(len(c.channels))], Sender: c.senders[rng.IntN(len(c.senders))],
				Content: strings.Join(parts, ". ") + fmt.Sprintf(" (%d)", j), Confidence: &conf,
				CreatedAt: now.Add(-span + time.Duration(j)*(span/benchN)),
			})
		}
		if _, err := c.e.StoreMessages(ctx, msgs); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "realistic corpus: %d messages in %s\n", benchN, time.Since(start).Round(time.Millisecond))
	return nil
}

type kwQuerySet struct {
	name    string
	e       *engine.Engine
	queries []string
	filters []struct {
		name string
		f    engine.Filter
	}
}

func BenchmarkKeywordCPU(b *testing.B) {
	c := getBenchCorpus(b)
	realOnce.Do(func() { real.err = buildRealCorpus(&real) })
	rng := rand.New(rand.NewPCG(benchSeed, 1))
	synth := func(lo, hi int) []string {
		var qs []string
		for range 100 {
			ws := make([]string, 1+rng.IntN(3))
			for k := range ws {
				ws[k] = c.words[lo+rng.IntN(hi-lo)]
			}
			qs = append(qs, strings.Join(ws, " "))
		}
		return qs
	}
	type flt = struct {
		name string
		f    engine.Filter
	}
	sets := []kwQuerySet{
		{"synthetic/typical", c.e, synth(100, 2000), []flt{{"none", engine.Filter{}}, {"channel", engine.Filter{ChannelIDs: []string{c.channels[3]}}}}},
		{"synthetic/common", c.e, synth(20, 100), []flt{{"none", engine.Filter{}}, {"channel", engine.Filter{ChannelIDs: []string{c.channels[3]}}}}},
	}
	if real.err == nil {
		rf := []flt{{"none", engine.Filter{}}, {"channel-10%", engine.Filter{ChannelIDs: []string{real.channels[2]}}},
			{"sender+min-confidence", engine.Filter{SenderIDs: []string{real.senders[1]}, MinConfidence: 0.5}}}
		sets = append(sets, kwQuerySet{"realistic/dataset-queries", real.e, real.dataset, rf},
			kwQuerySet{"realistic/agent-queries", real.e, real.agent, rf})
	} else {
		b.Logf("realistic corpus skipped: %v", real.err)
	}
	ctx := context.Background()
	for _, s := range sets {
		for _, fl := range s.filters {
			for _, variant := range []string{"fts5", "memory"} {
				b.Run(fmt.Sprintf("n=%d/%s/filter=%s/%s", benchN, s.name, fl.name, variant), func(b *testing.B) {
					if err := enginetest.StoreOf(s.e).SetKeywordIndex(variant == "memory"); err != nil {
						b.Fatal(err)
					}
					if variant == "memory" {
						st := enginetest.StoreOf(s.e).KeywordIndexStats()
						var ms0 runtime.MemStats
						runtime.ReadMemStats(&ms0)
						b.Logf("index: %d docs, %d tokens, %d terms, %d postings (~%.1f MB of postings); heap in use %.0f MB",
							st.Docs, st.Tokens, st.Terms, st.Postings, float64(st.Postings*8)/1e6, float64(ms0.HeapInuse)/1e6)
					}
					var per []time.Duration
					i := 0
					p0 := cpuNow(syscall.RUSAGE_SELF)
					for b.Loop() {
						q := s.queries[i%len(s.queries)]
						i++
						func() {
							runtimeLockOSThread()
							defer runtimeUnlockOSThread()
							t0 := threadCPU()
							if _, err := s.e.Search(ctx, engine.SearchRequest{Query: q, Filter: fl.f, Limit: 20, Mode: engine.ModeKeyword}); err != nil {
								b.Fatal(err)
							}
							per = append(per, threadCPU()-t0)
						}()
					}
					p1 := cpuNow(syscall.RUSAGE_SELF)
					slices.Sort(per)
					ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
					b.ReportMetric(ms(p1-p0)/float64(len(per)), "cpu-ms/op")
					b.ReportMetric(ms(per[len(per)/2]), "p50-cpu-ms")
					b.ReportMetric(ms(per[len(per)*95/100]), "p95-cpu-ms")
					reportMS(b)
				})
			}
		}
	}
}

func runtimeLockOSThread()   { runtime.LockOSThread() }
func runtimeUnlockOSThread() { runtime.UnlockOSThread() }

// BenchmarkKeywordIndexBuild measures building the in-memory keyword index
// of the realistic 100,000-message corpus (done once per process, in the
// background, after its first keyword search).
func BenchmarkKeywordIndexBuild(b *testing.B) {
	realOnce.Do(func() { real.err = buildRealCorpus(&real) })
	if real.err != nil {
		b.Skip(real.err)
	}
	var ms runtime.MemStats
	for b.Loop() {
		p0 := cpuNow(syscall.RUSAGE_SELF)
		if err := enginetest.StoreOf(real.e).BuildFreshKeywordIndex(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64((cpuNow(syscall.RUSAGE_SELF) - p0).Milliseconds()), "cpu-ms/build")
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/1e6, "heap-MB")
}
