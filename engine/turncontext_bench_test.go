package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// BenchmarkTurnContextCPU measures what scoring turns with their
// neighbours costs a search (in hybrid mode with the rank blend that uses
// it, engine/rankblend.go): two engines hold the same
// conversations (n messages, two senders taking turns a minute apart in
// each of 10 channels), one with turn context and one without, and answer
// the same questions interleaved, so both see the same machine load. It
// reports process CPU per query (cpu-ms/op), which load distorts far less
// than wall time, for each, and their difference, per search mode.
//
// Run: go test -run '^$' -bench TurnContextCPU -benchtime 200x ./engine/
func BenchmarkTurnContextCPU(b *testing.B) {
	const n = 20000
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("garden studio opening night dance store fashion camping beach painting pottery kids family career counseling support group parade adoption hike museum concert trip roadtrip horse sunset lake business investors marketing")
	text := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = words[r.IntN(len(words))]
		}
		return strings.Join(w, " ")
	}
	start := time.Now().Add(-30 * 24 * time.Hour)
	var in []engine.NewMessage
	for i := range n {
		in = append(in, engine.NewMessage{Channel: fmt.Sprintf("c%d", i%10), Sender: fmt.Sprintf("agent%d", i/10%2), Content: text(8 + r.IntN(12)), CreatedAt: start.Add(time.Duration(i/10) * time.Minute)})
	}
	var queries []string
	for range 50 {
		queries = append(queries, "What did they say about "+text(3)+"?")
	}
	open := func(qa engine.QueryAnalysis) *engine.Engine {
		e, err := enginetest.OpenEngine(ctx, b.TempDir(), engine.Options{Embedder: enginetest.NewHashEmbedder("hash-bench", 384), QueryAnalysis: qa})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close() })
		for i := 0; i < len(in); i += 1000 {
			if _, err := e.StoreMessages(ctx, in[i:min(i+1000, len(in))]); err != nil {
				b.Fatal(err)
			}
		}
		if err := ops.SyncVectors(ctx, e, nil); err != nil {
			b.Fatal(err)
		}
		return e
	}
	on, off := open(engine.QueryAnalysis{}), open(engine.QueryAnalysis{NoTurnContext: true})
	for _, mode := range []engine.SearchMode{engine.ModeSemantic, engine.ModeHybrid} {
		b.Run("n=20000/dim=384/mode="+string(mode), func(b *testing.B) {
			search := func(e *engine.Engine, q string) time.Duration {
				t0 := cpuNow(0) // RUSAGE_SELF
				if _, err := e.Search(ctx, engine.SearchRequest{Query: q, Limit: 10, Mode: mode}); err != nil {
					b.Fatal(err)
				}
				return cpuNow(0) - t0
			}
			for _, q := range queries[:5] { // warm both
				search(on, q)
				search(off, q)
			}
			var cpuOn, cpuOff time.Duration
			b.ResetTimer()
			for i := range b.N {
				q := queries[i%len(queries)]
				cpuOn += search(on, q)
				cpuOff += search(off, q)
			}
			per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
			b.ReportMetric(per(cpuOn), "on-cpu-ms/op")
			b.ReportMetric(per(cpuOff), "off-cpu-ms/op")
			b.ReportMetric(per(cpuOn)-per(cpuOff), "context-cpu-ms/op")
		})
	}
}
