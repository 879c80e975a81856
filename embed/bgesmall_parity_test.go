package embed_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/internal/racedetector"
)

// bge-small-en-v1.5 is a second real model, different from the built-in one
// where it matters to the encoder: 12 layers, 512 positions, [CLS] pooling,
// and a Hugging Face ONNX export (model.onnx, no safetensors) as its only
// weights. `make bge-small` lays it out in testdata/models/bge-small-en-v1.5;
// the reference vectors are onnxruntime's on that same file
// (testdata/py/record_bge_reference.py).

const bgeRefDir = repoRoot + "/testdata/py/reference/bge-small"

// needBGESmall returns the bge-small-en-v1.5 directory: CAIRN_BGE_SMALL_DIR,
// else testdata/models/bge-small-en-v1.5. Without it the test skips, or
// fails when CI is set.
func needBGESmall(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CAIRN_BGE_SMALL_DIR")
	if dir == "" {
		dir = filepath.Join(repoRoot, "testdata/models/bge-small-en-v1.5")
	}
	if _, err := os.Stat(filepath.Join(dir, "model.onnx")); err != nil {
		missing(t, "bge-small-en-v1.5 directory (CAIRN_BGE_SMALL_DIR; make bge-small): %v", err)
	}
	return dir
}

// TestBGESmallEmbeddingParity compares the native encoder's vectors for
// bge-small-en-v1.5 with onnxruntime's on the same ONNX file, text by text,
// texts at and over the 512-token limit included.
func TestBGESmallEmbeddingParity(t *testing.T) {
	dir := needBGESmall(t)
	ref := readReference(t, bgeRefDir)
	if testing.Short() {
		ref = ref.every(4) // keeps the race run short, two texts over 512 tokens included
	}
	m := openModel(t, dir, noCache)
	if m.Dim() != 384 {
		t.Fatalf("Dim() = %d, want 384", m.Dim())
	}
	got, err := m.Embed(context.Background(), ref.texts)
	if err != nil {
		t.Fatal(err)
	}
	const floor = 0.99999
	cos := make([]float64, len(got))
	for i := range got {
		cos[i] = cosine(got[i], ref.vecs[i])
		if cos[i] < floor {
			t.Errorf("text %d %.80q: cosine %.7f with onnxruntime, want >= %g", i, ref.texts[i], cos[i], floor)
		}
	}
	sorted := slices.Clone(cos)
	sort.Float64s(sorted)
	t.Logf("%d texts: cosine with onnxruntime min %.9f (1 - min = %.1e), median %.9f", len(cos), sorted[0], 1-sorted[0], sorted[len(sorted)/2])
	if st := m.Stats(); st.Truncated == 0 {
		t.Errorf("Stats().Truncated = 0: the texts over 512 tokens were not truncated")
	}
}

// TestBGESmallQueryPrompt checks that the prompt named in the model's
// config_sentence_transformers.json is prefixed only when asked for.
func TestBGESmallQueryPrompt(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("opens the 133 MB model three times: left to the run without -race")
	}
	dir := needBGESmall(t)
	const q = "how do I remove a directory recursively"
	plain := openModel(t, dir, noCache)
	prompted := openModel(t, dir, embed.Options{CacheSize: -1, Prompt: "query"})
	prefixed := openModel(t, dir, embed.Options{CacheSize: -1, Prefix: "Represent this sentence for searching relevant passages: "})
	embedOne := func(m *embed.Model) []float32 {
		v, err := m.Embed(context.Background(), []string{q})
		if err != nil {
			t.Fatal(err)
		}
		return v[0]
	}
	a, b, c := embedOne(plain), embedOne(prompted), embedOne(prefixed)
	if !slices.Equal(b, c) {
		t.Errorf("Prompt \"query\" and the instruction as Prefix give different vectors")
	}
	if slices.Equal(a, b) {
		t.Errorf("no prompt and Prompt \"query\" give the same vector: the prompt was not applied")
	}
}
