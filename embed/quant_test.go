package embed_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/embed/internal/quant"
)

// TestInt8Weights runs a model whose safetensors weights were quantized to
// int8 (embed/internal/quant) from a directory and from an fs.FS, against
// the same model in float32.
func TestInt8Weights(t *testing.T) {
	for _, tc := range []struct{ name, version string }{{"tiny", quant.V1}, {"tiny-cls", quant.V1}, {"tiny", quant.V2}, {"tiny-cls", quant.V2}} {
		name := tc.name
		t.Run(name+"/v"+tc.version, func(t *testing.T) {
			dir := testModel(t, name)
			src, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			q, err := quant.Quantize(src, tc.version)
			if err != nil {
				t.Fatal(err)
			}
			qdir := onnxOnlyCopy(t, dir)
			if err := os.WriteFile(filepath.Join(qdir, "model.safetensors"), q, 0o644); err != nil {
				t.Fatal(err)
			}
			mem := memModel(t, dir, q)
			ref := openModel(t, dir, embed.Options{CacheSize: -1})
			fromDir := openModel(t, qdir, embed.Options{CacheSize: -1})
			modelName, _, _ := strings.Cut(ref.ModelID(), "@")
			fromFS, err := embed.OpenFS(context.Background(), mem, embed.Options{CacheSize: -1, Name: modelName})
			if err != nil {
				t.Fatal(err)
			}
			defer fromFS.Close()
			if fromDir.ModelID() == ref.ModelID() || fromFS.ModelID() != fromDir.ModelID() {
				t.Fatalf("ModelIDs: fp32 %s, int8 dir %s, int8 fs %s", ref.ModelID(), fromDir.ModelID(), fromFS.ModelID())
			}
			if fromFS.Pooling() != ref.Pooling() {
				t.Fatalf("pooling %v from the fs, %v from the directory", fromFS.Pooling(), ref.Pooling())
			}
			var texts []string
			for _, c := range loadReference(t, name) {
				texts = append(texts, c.Text)
			}
			a, err := ref.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			b, err := fromDir.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			c, err := fromFS.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range texts {
				if maxAbsDiff(b[i], c[i]) != 0 {
					t.Fatalf("text %d: the directory and the fs give different vectors", i)
				}
				var cos float64
				for d := range a[i] {
					cos += float64(a[i][d]) * float64(b[i][d])
				}
				if cos < 0.99 {
					t.Errorf("text %d: cosine(fp32, int8) = %.5f", i, cos)
				}
			}
		})
	}
}

// memModel is the model directory dir in memory with weights as its
// model.safetensors.
func memModel(t *testing.T, dir string, weights []byte) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{"model.safetensors": {Data: weights}}
	for _, f := range []string{"config.json", "tokenizer.json", "modules.json", "1_Pooling/config.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		m[f] = &fstest.MapFile{Data: b}
	}
	return m
}

// TestPackedWeights checks format version 3 (quant.Pack) on generated
// models: it unpacks to the version-2 file byte for byte, and the model
// opened from it has that file's ModelID and gives bit for bit its
// vectors with every kernel set; a damaged or foreign packed file is
// refused.
func TestPackedWeights(t *testing.T) {
	for _, name := range []string{"tiny", "tiny-cls"} {
		t.Run(name, func(t *testing.T) {
			dir := testModel(t, name)
			src, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			v2, err := quant.Quantize(src, quant.V2)
			if err != nil {
				t.Fatal(err)
			}
			v3, err := quant.Pack(v2)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(v3, []byte(quant.QKV+quant.PanelsSuffix)) || !bytes.Contains(v3, []byte("output.dense.weight"+quant.PanelScalesSuffix)) {
				t.Fatal("Pack left the Linear weights unpacked")
			}
			if back, err := quant.Unpack(v3); err != nil || !bytes.Equal(back, v2) {
				t.Fatalf("Unpack(Pack(v2)) differs from v2 (error %v)", err)
			}
			if _, err := quant.Pack(v3); err == nil {
				t.Fatal("Pack accepted a packed file")
			}
			mem := func(weights []byte) fstest.MapFS { return memModel(t, dir, weights) }
			var texts []string
			for _, c := range loadReference(t, name) {
				texts = append(texts, c.Text)
			}
			for _, k := range embed.AvailableKernels() {
				opts := embed.Options{CacheSize: -1, Kernels: k, Name: name}
				plain, err := embed.OpenFS(context.Background(), mem(v2), opts)
				if err != nil {
					t.Fatal(err)
				}
				packed, err := embed.OpenFS(context.Background(), mem(v3), opts)
				if err != nil {
					t.Fatal(err)
				}
				if plain.ModelID() != packed.ModelID() {
					t.Fatalf("%s: ModelID %s plain, %s packed", k, plain.ModelID(), packed.ModelID())
				}
				a, err := plain.Embed(context.Background(), texts)
				if err != nil {
					t.Fatal(err)
				}
				b, err := packed.Embed(context.Background(), texts)
				if err != nil {
					t.Fatal(err)
				}
				plain.Close()
				packed.Close()
				for i := range texts {
					for d := range a[i] {
						if math.Float32bits(a[i][d]) != math.Float32bits(b[i][d]) {
							t.Fatalf("%s: text %d dimension %d: %g plain, %g packed", k, i, d, a[i][d], b[i][d])
						}
					}
				}
			}
			// A flipped weight byte no longer unpacks to the recorded file.
			bad := bytes.Clone(v3)
			bad[len(bad)-1] ^= 1
			if _, err := quant.Unpack(bad); !errors.Is(err, quant.ErrNotUnpacked) {
				t.Fatalf("Unpack of a damaged file: %v", err)
			}
			// Another panel layout is refused, naming it.
			other := bytes.Replace(v3, []byte(quant.Layout), []byte(strings.Repeat("x", len(quant.Layout))), 1)
			if _, err := embed.OpenFS(context.Background(), mem(other), embed.Options{}); !errors.Is(err, embed.ErrUnsupported) || !strings.Contains(err.Error(), quant.LayoutKey) {
				t.Fatalf("a packed file of another layout: %v", err)
			}
		})
	}
}
