package builtin_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/embed/builtin"
	"github.com/cairn-dev/cairn/embed/internal/quant"
)

// TestSHA256SUMS checks every embedded file against SHA256SUMS, and that
// SHA256SUMS lists every file.
func TestSHA256SUMS(t *testing.T) {
	fsys := builtin.Files()
	sums, err := fs.ReadFile(fsys, "SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(sums))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", sc.Text())
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		if got := hex.EncodeToString(h[:]); got != sum {
			t.Errorf("%s: sha256 %s, SHA256SUMS says %s (regenerate with go run ./embed/internal/builtingen)", name, got, sum)
		}
		listed[name] = true
	}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && p != "SHA256SUMS" && !listed[p] {
			t.Errorf("%s is embedded but not in SHA256SUMS", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"LICENSE", "NOTICE", "model.safetensors", "tokenizer.json", "config.json"} {
		if !listed[f] {
			t.Errorf("%s missing", f)
		}
	}
}

func openBuiltin(t testing.TB, opts embed.Options) *embed.Model {
	t.Helper()
	m, err := builtin.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestOpen(t *testing.T) {
	m := openBuiltin(t, embed.Options{})
	if !regexp.MustCompile(`^all-MiniLM-L6-v2@sha256:[0-9a-f]{64}$`).MatchString(m.ModelID()) || m.ModelID() != builtin.ModelID() {
		t.Fatalf("ModelID %q, builtin.ModelID %q", m.ModelID(), builtin.ModelID())
	}
	if m.Dim() != builtin.Dim || m.MaxTokens() != 256 || m.Pooling() != embed.PoolMean {
		t.Fatalf("Dim %d MaxTokens %d Pooling %v", m.Dim(), m.MaxTokens(), m.Pooling())
	}
	vs, err := m.Embed(context.Background(), []string{
		"How do I reset my password?",
		"Steps to recover a forgotten login credential",
		"The recipe needs two cups of flour.",
	})
	if err != nil {
		t.Fatal(err)
	}
	if near, far := dot(vs[0], vs[1]), dot(vs[0], vs[2]); near < far+0.2 {
		t.Fatalf("paraphrase cosine %.3f, unrelated %.3f", near, far)
	}
}

// TestAgainstFP32 compares the built-in form with the original fp32 model,
// when its directory is given in CAIRN_MINILM_FP32.
func TestAgainstFP32(t *testing.T) {
	dir := os.Getenv("CAIRN_MINILM_FP32")
	if dir == "" {
		t.Skip("set CAIRN_MINILM_FP32 to the fp32 all-MiniLM-L6-v2 directory")
	}
	ref, err := embed.Open(context.Background(), dir, embed.Options{Name: builtin.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	m := openBuiltin(t, embed.Options{})
	if ref.ModelID() == m.ModelID() {
		t.Fatal("fp32 and int8 weights share a ModelID")
	}
	texts := []string{
		"A man is playing a guitar.",
		"Agents share what they learned through a common memory.",
		"The quick brown fox jumps over the lazy dog.",
		"Café crème brûlée, naïve façade, 東京 and 🙂 emoji",
		strings.Repeat("long text that gets truncated ", 200),
	}
	a, err := ref.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		if c := dot(a[i], b[i]); c < 0.995 {
			t.Errorf("text %d: cosine(fp32, built-in) = %.5f, want >= 0.995", i, c)
		}
	}
}

// BenchmarkOpen is the built-in model's cold start: Open and one short
// embedding (the cache cannot help: each iteration opens a new model).
func BenchmarkOpen(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		m, err := builtin.Open(context.Background(), embed.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Embed(context.Background(), []string{"what did the agents learn about retries?"}); err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
}

// unpackedSHA256 is the SHA-256 of the built-in weights as plain int8 with
// per-group scales (format version 2), the model.safetensors committed
// before its Linear weights were stored packed: the model's identity.
const unpackedSHA256 = "ffba142c712dea6e1c5c7376e9069a70a12ef3210c626d427aad932ffc9fa4ed"

// TestPackedWeights checks that the packed weights are the plain int8
// file's numbers in another layout: they unpack to the file whose SHA-256
// is the model's id, and the model opened from that file (whose Linear
// weights are laid out at load) gives bit for bit the same vectors, with
// the same id, as the built-in one read in place.
func TestPackedWeights(t *testing.T) {
	packed, err := fs.ReadFile(builtin.Files(), "model.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := quant.Unpack(packed)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(plain)
	if got := hex.EncodeToString(h[:]); got != unpackedSHA256 || builtin.ModelID() != builtin.Name+"@sha256:"+unpackedSHA256 {
		t.Fatalf("unpacked weights hash to %s, ModelID %s, want %s", got, builtin.ModelID(), unpackedSHA256)
	}
	fsys := fstest.MapFS{"model.safetensors": {Data: plain}}
	err = fs.WalkDir(builtin.Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == "model.safetensors" {
			return err
		}
		b, err := fs.ReadFile(builtin.Files(), p)
		fsys[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"Thank you!",
		"How do I reset my password?",
		"Café crème brûlée, naïve façade, 東京 and 🙂 emoji",
		"the retry policy: exponential backoff, capped at 30 seconds, with jitter",
		strings.Repeat("a longer text, with punctuation; ", 12),
	}
	for _, k := range embed.AvailableKernels() {
		texts := texts
		if k == embed.KernelsGo {
			texts = texts[:2] // the pure-Go kernels are slow; the layout is the same
		}
		m := openBuiltin(t, embed.Options{Kernels: k, CacheSize: -1})
		ref, err := embed.OpenFS(context.Background(), fsys, embed.Options{Kernels: k, CacheSize: -1, Name: builtin.Name})
		if err != nil {
			t.Fatal(err)
		}
		if ref.ModelID() != m.ModelID() {
			t.Errorf("%s: ModelID %s unpacked, %s packed", k, ref.ModelID(), m.ModelID())
		}
		want, err := ref.Embed(context.Background(), texts)
		ref.Close()
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range texts {
			for d := range want[i] {
				if math.Float32bits(got[i][d]) != math.Float32bits(want[i][d]) {
					t.Fatalf("%s: text %d dimension %d: %g packed, %g unpacked", k, i, d, got[i][d], want[i][d])
				}
			}
		}
	}
}
