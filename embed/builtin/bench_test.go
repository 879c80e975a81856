package builtin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/embed"
)

// BenchmarkEmbed is the built-in model's throughput on sentences of about
// 20 and 60 tokens at batch 1 and 32 (the cache is off).
func BenchmarkEmbed(b *testing.B) {
	m := openBuiltin(b, embed.Options{CacheSize: -1})
	words := strings.Fields("agents share what they learned about retries timeouts and the database schema while the search index rebuilds quietly in the background every night after deploys finish")
	for _, tokens := range []int{20, 60} {
		for _, bs := range []int{1, 32} {
			texts := make([]string, bs)
			for i := range texts {
				var w []string
				for j := 0; ; j++ {
					w = append(w, words[(i*5+j)%len(words)])
					if ids, _ := m.Tokenizer().Encode(strings.Join(w, " ")); len(ids) >= tokens {
						break
					}
				}
				texts[i] = strings.Join(w, " ")
			}
			b.Run(fmt.Sprintf("tokens=%d/batch=%d", tokens, bs), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := m.Embed(context.Background(), texts); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(bs*b.N)/b.Elapsed().Seconds(), "sentences/s")
			})
		}
	}
}
