package embed_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/embed"
)

// benchTexts returns n texts of exactly tokens tokens with the model's tokenizer.
func benchTexts(tb testing.TB, tok *embed.Tokenizer, n, tokens int) []string {
	words := strings.Fields("river stone mountain quiet signal agent memory search vector channel message garden window planet music bridge winter summer forest ocean")
	out := make([]string, n)
	for i := range out {
		var w []string
		for j := 0; ; j++ {
			w = append(w, words[(i*7+j*3)%len(words)])
			ids, _ := tok.Encode(strings.Join(w, " "))
			if len(ids) >= tokens {
				break
			}
		}
		out[i] = strings.Join(w, " ")
		if ids, _ := tok.Encode(out[i]); len(ids) != tokens {
			tb.Fatalf("text has %d tokens, want %d", len(ids), tokens)
		}
	}
	return out
}

func BenchmarkEmbed(b *testing.B) {
	models := []string{"tiny", "minilm"}
	for _, name := range models {
		dir := testModel(b, name)
		backends := []embed.Backend{embed.BackendNative}
		if hugotBuilt {
			backends = append(backends, embed.BackendHugot)
		}
		for _, backend := range backends {
			kernels := []embed.Kernels{""}
			if backend == embed.BackendNative {
				kernels = embed.AvailableKernels()
			}
			for _, k := range kernels {
				m, err := embed.Open(context.Background(), dir, embed.Options{Backend: backend, Kernels: k, CacheSize: -1})
				if err != nil {
					b.Fatal(err)
				}
				for _, tokens := range []int{20, 60} {
					for _, bs := range []int{1, 8, 32} {
						texts := benchTexts(b, m.Tokenizer(), bs, tokens)
						b.Run(fmt.Sprintf("model=%s/backend=%s/kernels=%s/tokens=%d/batch=%d", name, backend, m.Kernels(), tokens, bs), func(b *testing.B) {
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
				m.Close()
			}
		}
	}
}
