package embed_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/embed"
)

func TestModelIDAndDim(t *testing.T) {
	dir := testModel(t, "tiny")
	native := openModel(t, dir, embed.Options{})
	if !regexp.MustCompile(`^cairn-tiny-bert@sha256:[0-9a-f]{64}$`).MatchString(native.ModelID()) {
		t.Fatalf("ModelID = %q", native.ModelID())
	}
	if native.Dim() != 32 {
		t.Fatalf("Dim = %d", native.Dim())
	}
	named := openModel(t, dir, embed.Options{Name: "x"})
	if !strings.HasPrefix(named.ModelID(), "x@sha256:") {
		t.Fatalf("named ModelID = %q", named.ModelID())
	}
	other := openModel(t, testModel(t, "tiny-cls"), embed.Options{})
	if other.ModelID() == native.ModelID() {
		t.Fatal("different weights, same ModelID")
	}
	onnxOnly := openModel(t, onnxOnlyCopy(t, dir), embed.Options{})
	if onnxOnly.ModelID() == native.ModelID() {
		t.Fatal("model.onnx and model.safetensors hashed the same")
	}
	if !hugotBuilt {
		t.Skip("the hugot cross-check runs with -tags hugot")
	}
	if raceEnabled {
		t.Skip("hugot's simplego backend has an upstream data race; see race_test.go")
	}
	hg := openModel(t, dir, embed.Options{Backend: embed.BackendHugot})
	if native.ModelID() != hg.ModelID() || hg.Dim() != 32 {
		t.Fatalf("hugot: ModelID %q (native %q), Dim %d", hg.ModelID(), native.ModelID(), hg.Dim())
	}
}

func TestCacheStats(t *testing.T) {
	m := openModel(t, testModel(t, "tiny"), embed.Options{CacheSize: 2})
	ctx := context.Background()
	a, err := m.Embed(ctx, []string{"alpha", "beta", "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if maxAbsDiff(a[0], a[2]) != 0 {
		t.Fatal("same text, different vectors")
	}
	if _, err := m.Embed(ctx, []string{"alpha", "gamma", "alpha"}); err != nil {
		t.Fatal(err)
	}
	s := m.Stats()
	// First call: 3 misses (the cache is filled after the batch). Second: alpha
	// hits twice, gamma misses.
	if s.CacheHits != 2 || s.CacheMisses != 4 || s.Texts != 6 || s.CacheLen != 2 {
		t.Fatalf("stats %+v", s)
	}
	if s.HitRate < 0.33 || s.HitRate > 0.34 {
		t.Fatalf("hit rate %g", s.HitRate)
	}
}

func TestOverflow(t *testing.T) {
	dir := testModel(t, "tiny")
	long := strings.Repeat("stone river ", 20) // 40 pieces
	ctx := context.Background()

	tr := openModel(t, dir, embed.Options{MaxTokens: 16})
	res, err := tr.EmbedDetailed(ctx, []string{long, "short"})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Truncated != 26 || res[0].Tokens != 42 || res[1].Truncated != 0 || tr.Stats().Truncated != 1 {
		t.Fatalf("truncation: %+v %+v stats %+v", res[0].Truncated, res[0].Tokens, tr.Stats())
	}

	ch := openModel(t, dir, embed.Options{MaxTokens: 16, Overflow: embed.OverflowChunk})
	res, err = ch.EmbedDetailed(ctx, []string{long})
	if err != nil {
		t.Fatal(err)
	}
	if len(res[0].Chunks) != 3 || ch.Stats().Chunked != 1 {
		t.Fatalf("chunks: %d, stats %+v", len(res[0].Chunks), ch.Stats())
	}
	// The first window is the truncated text.
	trv, _ := tr.Embed(ctx, []string{long})
	if d := maxAbsDiff(res[0].Chunks[0], trv[0]); d > 1e-6 {
		t.Fatalf("first chunk differs from truncation by %g", d)
	}

	er := openModel(t, dir, embed.Options{MaxTokens: 16, Overflow: embed.OverflowError})
	if _, err := er.Embed(ctx, []string{long}); !errors.Is(err, embed.ErrTooLong) {
		t.Fatalf("err = %v, want ErrTooLong", err)
	}
}

func TestPrompt(t *testing.T) {
	dir := testModel(t, "tiny-cls")
	ctx := context.Background()
	q := openModel(t, dir, embed.Options{Prompt: "query"})
	plain := openModel(t, dir, embed.Options{})
	if q.Prefix() != "query: " || plain.Prefix() != "" || q.Pooling() != embed.PoolCLS {
		t.Fatalf("prefix %q / %q, pooling %v", q.Prefix(), plain.Prefix(), q.Pooling())
	}
	a, err := q.Embed(ctx, []string{"hello"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := plain.Embed(ctx, []string{"query: hello"})
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(a[0], b[0]); d != 0 {
		t.Fatalf("prompted vector differs by %g", d)
	}
	if _, err := embed.Open(ctx, dir, embed.Options{Prompt: "nope"}); !errors.Is(err, embed.ErrBadModel) {
		t.Fatalf("unknown prompt: %v", err)
	}
}

func TestCancelAndClose(t *testing.T) {
	m, err := embed.Open(context.Background(), testModel(t, "tiny"), embed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Embed(context.Background(), []string{"x"}); !errors.Is(err, embed.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestConcurrentEmbed(t *testing.T) {
	m := openModel(t, testModel(t, "tiny"), embed.Options{QueueSize: 2, BatchSize: 3, CacheSize: -1})
	ctx := context.Background()
	texts := []string{"one", "two words", "three little words", "a b c d e f g", "İstanbul 中文", ""}
	want, err := m.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				got, err := m.Embed(ctx, texts)
				if err != nil {
					t.Error(err)
					return
				}
				for j := range got {
					if d := maxAbsDiff(got[j], want[j]); d > 1e-6 {
						t.Errorf("text %d differs by %g under concurrency", j, d)
					}
				}
			}
		}()
	}
	wg.Wait()
	// Batch composition must not change a text's vector.
	for j, tx := range texts {
		one, err := m.Embed(ctx, []string{tx})
		if err != nil {
			t.Fatal(err)
		}
		if d := maxAbsDiff(one[0], want[j]); d > 1e-6 {
			t.Errorf("text %d alone differs by %g", j, d)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := embed.Open(ctx, t.TempDir(), embed.Options{}); !errors.Is(err, embed.ErrBadModel) {
		t.Fatalf("empty dir: %v", err)
	}
	src := testModel(t, "tiny")
	dir := t.TempDir()
	for _, n := range []string{"config.json", "tokenizer.json", "modules.json", "sentence_bert_config.json"} {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
	}
	if _, err := embed.Open(ctx, dir, embed.Options{}); !errors.Is(err, embed.ErrBadModel) {
		t.Fatalf("no weights: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "model.safetensors"), []byte("garbage"), 0o644)
	if _, err := embed.Open(ctx, dir, embed.Options{}); !errors.Is(err, embed.ErrBadModel) {
		t.Fatalf("bad weights: %v", err)
	}
	if _, err := embed.Open(ctx, src, embed.Options{Kernels: "sse9"}); !errors.Is(err, embed.ErrUnsupported) {
		t.Fatalf("bad kernels: %v", err)
	}
	if _, err := embed.Open(ctx, dir, embed.Options{Backend: embed.BackendHugot}); !errors.Is(err, embed.ErrUnsupported) {
		t.Fatalf("hugot without model.onnx (or without -tags hugot): %v", err)
	}
}
