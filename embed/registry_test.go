package embed_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/embed"
)

// copyDir copies the regular files of src (recursively) into dst, except
// those skip names.
func copyDir(t *testing.T, src, dst string, skip ...string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if slices.Contains(skip, filepath.ToSlash(rel)) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRegistryImportKeepsOneWeightsCopy(t *testing.T) {
	ctx := context.Background()
	src := testModel(t, "tiny") // has model.safetensors and model.onnx
	for _, f := range []string{"model.safetensors", "model.onnx"} {
		if _, err := os.Stat(filepath.Join(src, f)); err != nil {
			t.Fatalf("the tiny test model should have %s: %v", f, err)
		}
	}
	want := openModel(t, src, embed.Options{}).ModelID()
	reg := embed.NewRegistry(filepath.Join(t.TempDir(), "models"))
	var stages []string
	man, err := reg.Import(ctx, src, embed.ImportOptions{Name: "tiny", Progress: func(p embed.Progress) {
		if len(stages) == 0 || stages[len(stages)-1] != p.Stage+" "+p.File {
			stages = append(stages, p.Stage+" "+p.File)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if man.Name != "tiny" || man.ModelID != want || man.Dim != 32 || man.Source != src {
		t.Fatalf("manifest: %+v, want model %s", man, want)
	}
	if _, ok := man.Files["model.safetensors"]; !ok {
		t.Fatalf("manifest files %v: no model.safetensors", man.Files)
	}
	if _, ok := man.Files["model.onnx"]; ok {
		t.Fatalf("manifest files %v: model.onnx copied next to model.safetensors", man.Files)
	}
	if _, err := os.Stat(filepath.Join(reg.Path("tiny"), "model.onnx")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("model.onnx in the imported copy: %v", err)
	}
	if !slices.Contains(stages, "copy model.safetensors") || !slices.Contains(stages, "verify model.safetensors") {
		t.Fatalf("progress stages: %v", stages)
	}
	if got := openModel(t, reg.Path("tiny"), embed.Options{}).ModelID(); got != want {
		t.Fatalf("the imported copy opens as %s, want %s", got, want)
	}

	// An ONNX-only model keeps its model.onnx.
	onnxOnly := filepath.Join(t.TempDir(), "tiny-onnx")
	copyDir(t, src, onnxOnly, "model.safetensors")
	man, err = reg.Import(ctx, onnxOnly, embed.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := man.Files["model.onnx"]; man.Name != "tiny-onnx" || !ok {
		t.Fatalf("ONNX-only import: %+v", man)
	}

	ents, err := reg.List(ctx, embed.ListOptions{Verify: true})
	if err != nil || len(ents) != 2 || ents[0].Name != "tiny" || ents[1].Name != "tiny-onnx" || ents[0].Err != nil || ents[1].Err != nil {
		t.Fatalf("list: %+v %v", ents, err)
	}
}

func TestRegistryRefusesAndDetects(t *testing.T) {
	ctx := context.Background()
	src := testModel(t, "tiny")
	reg := embed.NewRegistry(filepath.Join(t.TempDir(), "models"))
	if _, err := reg.Import(ctx, src, embed.ImportOptions{Name: "../x"}); !errors.Is(err, embed.ErrModelName) {
		t.Fatalf("bad name: %v", err)
	}
	if _, err := reg.Import(ctx, t.TempDir(), embed.ImportOptions{Name: "empty"}); err == nil || !strings.Contains(err.Error(), "does not load") {
		t.Fatalf("not a model: %v", err)
	}
	if names, err := reg.Names(); err != nil || len(names) != 0 {
		t.Fatalf("a failed import left %v (%v)", names, err)
	}
	if _, err := reg.Import(ctx, src, embed.ImportOptions{Name: "tiny"}); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Import(ctx, src, embed.ImportOptions{Name: "tiny"}); !errors.Is(err, embed.ErrModelExists) {
		t.Fatalf("second import: %v", err)
	}
	if err := os.WriteFile(filepath.Join(reg.Path("tiny"), "config.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(reg.Dir(), "hand-made"), 0o755)
	ents, err := reg.List(ctx, embed.ListOptions{Verify: true})
	if err != nil || len(ents) != 2 {
		t.Fatalf("list: %+v %v", ents, err)
	}
	if ents[0].Name != "hand-made" || !errors.Is(ents[0].Err, embed.ErrBadModel) {
		t.Fatalf("a directory without manifest: %+v", ents[0])
	}
	if !errors.Is(ents[1].Err, embed.ErrCorruptCopy) || !strings.Contains(ents[1].Err.Error(), "config.json") {
		t.Fatalf("corruption: %+v", ents[1])
	}
	// Without Verify nothing is re-hashed.
	if ents, err := reg.List(ctx, embed.ListOptions{}); err != nil || ents[1].Err != nil {
		t.Fatalf("list without verify: %+v %v", ents, err)
	}
}

func TestRegistryPull(t *testing.T) {
	ctx := context.Background()
	src := testModel(t, "tiny")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rel, ok := strings.CutPrefix(r.URL.Path, "/owner/tiny/resolve/main/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, filepath.Join(src, filepath.FromSlash(rel)))
	}))
	defer srv.Close()
	reg := embed.NewRegistry(filepath.Join(t.TempDir(), "models"))
	downloads := 0
	man, err := reg.Pull(ctx, "owner/tiny", embed.PullOptions{Endpoint: srv.URL, Progress: func(p embed.Progress) {
		if p.Stage == "download" && p.Done == p.Total && p.Total > 0 {
			downloads++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if man.Name != "tiny" || man.Source != srv.URL+"/owner/tiny" || man.Dim != 32 || downloads < 3 {
		t.Fatalf("pulled %+v after %d downloads", man, downloads)
	}
	if _, err := reg.Pull(ctx, "owner/missing", embed.PullOptions{Endpoint: srv.URL}); !errors.Is(err, embed.ErrRemoteMissing) || !strings.Contains(err.Error(), "config.json") {
		t.Fatalf("a repository without config.json: %v", err)
	}
	if _, err := reg.Pull(ctx, "not-a-repo", embed.PullOptions{Endpoint: srv.URL}); !errors.Is(err, embed.ErrModelName) {
		t.Fatalf("bad repository name: %v", err)
	}
	// A server that refuses connections stands in for no network.
	if _, err := reg.Pull(ctx, "owner/other", embed.PullOptions{Endpoint: "http://127.0.0.1:1"}); !errors.Is(err, embed.ErrDownload) {
		t.Fatalf("offline: %v", err)
	}
}

// The manifests of every format stay readable; a newer one is refused.
func TestManifestFormats(t *testing.T) {
	for _, c := range []struct {
		file    string
		format  int
		wantErr error
	}{{"v0.json", 0, nil}, {"v1.json", 1, nil}, {"v2.json", 0, embed.ErrManifestVersion}} {
		dir := t.TempDir()
		b, err := os.ReadFile(filepath.Join("testdata", "manifest", c.file))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, embed.ManifestName), b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := embed.ReadManifest(dir)
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) {
				t.Errorf("%s: %v, want %v", c.file, err, c.wantErr)
			}
			continue
		}
		if err != nil || m.Format != c.format || m.Name != "tiny" || m.Dim != 32 || len(m.Files) != 1 {
			t.Errorf("%s: %+v %v", c.file, m, err)
		}
	}
}
