package embed_test

import (
	"context"
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
			mem := fstest.MapFS{"model.safetensors": {Data: q}}
			for _, f := range []string{"config.json", "tokenizer.json", "modules.json", "1_Pooling/config.json"} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				mem[f] = &fstest.MapFile{Data: b}
			}
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
