package embed_test

import (
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/embed/internal/testmodel"
)

var modelsDir = flag.String("models", "", "directory of generated test models (default: a temporary directory)")

var (
	genMu   sync.Mutex
	genDone = map[string]string{}
	tmpRoot string
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if tmpRoot != "" {
		os.RemoveAll(tmpRoot)
	}
	os.Exit(code)
}

// testModel returns the directory of a generated model ("tiny", "tiny-cls", "minilm").
func testModel(t testing.TB, name string) string {
	t.Helper()
	tok := miniLMTokenizer(t)
	genMu.Lock()
	defer genMu.Unlock()
	if d, ok := genDone[name]; ok {
		return d
	}
	root := *modelsDir
	if root == "" {
		if tmpRoot == "" {
			var err error
			if tmpRoot, err = os.MkdirTemp("", "cairn-embed-models-"); err != nil {
				t.Fatal(err)
			}
		}
		root = tmpRoot
	}
	specs := map[string]testmodel.Spec{"tiny": testmodel.Tiny(), "tiny-cls": testmodel.TinyCLS(), "minilm": testmodel.MiniLM()}
	dir := filepath.Join(root, name)
	if _, err := os.Stat(filepath.Join(dir, "model.onnx")); err != nil {
		if err := specs[name].Write(dir, tok); err != nil {
			t.Fatal(err)
		}
	}
	genDone[name] = dir
	return dir
}

type refCase struct {
	Text   string    `json:"text"`
	IDs    []int32   `json:"ids"`
	Vector []float32 `json:"vector"`
}

func loadReference(t testing.TB, name string) []refCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "reference_"+name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct{ Cases []refCase }
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	return ref.Cases
}

func maxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var m float64
	for i := range a {
		m = max(m, math.Abs(float64(a[i])-float64(b[i])))
	}
	return m
}

func openModel(t testing.TB, dir string, opts embed.Options) *embed.Model {
	t.Helper()
	m, err := embed.Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
		if err := m.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
	return m
}

// TestReference checks every backend and kernel set against the numpy
// reference vectors, and against each other.
func TestReference(t *testing.T) {
	models := []string{"tiny", "tiny-cls", "minilm"}
	if testing.Short() {
		models = models[:2]
	}
	const tol = 1e-5
	for _, name := range models {
		t.Run(name, func(t *testing.T) {
			dir := testModel(t, name)
			ref := loadReference(t, name)
			texts := make([]string, len(ref))
			for i, c := range ref {
				texts[i] = c.Text
			}
			type variant struct {
				label string
				opts  embed.Options
			}
			var vs []variant
			for _, k := range embed.AvailableKernels() {
				vs = append(vs, variant{"native/" + string(k), embed.Options{Kernels: k, CacheSize: -1}})
			}
			vs = append(vs, variant{"native-onnx-weights", embed.Options{CacheSize: -1}})
			if hugotBuilt && !raceEnabled {
				vs = append(vs, variant{"hugot", embed.Options{Backend: embed.BackendHugot, CacheSize: -1, BatchSize: 4}})
			}
			var first [][]float32
			for _, v := range vs {
				t.Run(v.label, func(t *testing.T) {
					d := dir
					if v.label == "native-onnx-weights" {
						d = onnxOnlyCopy(t, dir)
					}
					m := openModel(t, d, v.opts)
					for i, c := range ref {
						ids, _ := m.Tokenizer().Encode(c.Text)
						if !slices.Equal(ids, c.IDs) {
							t.Fatalf("text %d: ids %v, reference %v", i, ids, c.IDs)
						}
					}
					got, err := m.Embed(context.Background(), texts)
					if err != nil {
						t.Fatal(err)
					}
					for i, c := range ref {
						if d := maxAbsDiff(got[i], c.Vector); d > tol {
							t.Errorf("text %d (%.30q): max |d| = %g vs numpy, want <= %g", i, c.Text, d, tol)
						}
					}
					if first == nil {
						first = got
						return
					}
					for i := range got {
						if d := maxAbsDiff(got[i], first[i]); d > tol {
							t.Errorf("text %d: max |d| = %g vs %s", i, d, vs[0].label)
						}
					}
				})
			}
		})
	}
}

// onnxOnlyCopy links the model directory without model.safetensors, so the
// native backend loads the ONNX initializers.
func onnxOnlyCopy(t testing.TB, dir string) string {
	t.Helper()
	out := t.TempDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == "model.safetensors" {
			continue
		}
		if err := os.Symlink(filepath.Join(dir, e.Name()), filepath.Join(out, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
