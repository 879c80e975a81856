package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/embed/builtin"
)

// tinyModelDir is the temporary directory tinyModelOnce generated into;
// TestMain removes it after the package's tests.
var tinyModelDir string

var tinyModelOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "cairn-cli-model-")
	if err != nil {
		return "", err
	}
	tinyModelDir = dir
	cmd := exec.Command("go", "run", "./embed/testdata/gen", "-model", "tiny", "-out", dir)
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &exec.Error{Name: string(out), Err: err}
	}
	return filepath.Join(dir, "tiny"), nil
})

// tinyModel generates embed's tiny test model (seeded random BERT weights).
func tinyModel(t *testing.T) string {
	t.Helper()
	dir, err := tinyModelOnce()
	if err != nil {
		t.Skipf("cannot generate the tiny test model (needs the module cache's daulet/tokenizers test data): %v", err)
	}
	return dir
}

func TestEmbedCommand(t *testing.T) {
	model := tinyModel(t)
	data := t.TempDir()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data})

	out, errOut, code := runCLI(t, getenv, "", "embed", "--model", model, "--json", "hello world", "second text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines: %q", len(lines), out)
	}
	var v []float64
	if err := json.Unmarshal([]byte(lines[0]), &v); err != nil || len(v) != 32 {
		t.Fatalf("line 0: %v, %d values", err, len(v))
	}

	// --file, plain output, truncation reported.
	f := filepath.Join(t.TempDir(), "texts.txt")
	os.WriteFile(f, []byte("one\n"+strings.Repeat("word ", 300)+"\n"), 0o644)
	out, errOut, code = runCLI(t, getenv, "", "embed", "--model", model, "--file", f)
	if code != 0 || len(strings.Split(strings.TrimSpace(out), "\n")) != 2 || len(strings.Fields(strings.Split(out, "\n")[0])) != 32 {
		t.Fatalf("--file: exit %d, out %q, err %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "text 2 has 302 tokens; 46 were truncated") {
		t.Fatalf("truncation not reported: %q", errOut)
	}

	// No model imported: the built-in one.
	out, errOut, code = runCLI(t, getenv, "", "embed", "--json", "x")
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || len(v) != builtin.Dim {
		t.Fatalf("built-in model: exit %d %q %q", code, out, errOut)
	}
	// A model that is nowhere: a clear error.
	_, errOut, code = runCLI(t, getenv, "", "embed", "--model", "nowhere", "x")
	if code == 0 || !strings.Contains(errOut, `--model "nowhere" is neither a model directory`) {
		t.Fatalf("no such model: exit %d %q", code, errOut)
	}
	_, _, code = runCLI(t, getenv, "", "embed", "--model", model)
	if code != 2 {
		t.Fatalf("no texts: exit %d", code)
	}
}

func TestModelCommands(t *testing.T) {
	model := tinyModel(t)
	data := t.TempDir()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data})

	out, errOut, code := runCLI(t, getenv, "", "model", "list")
	if code != 0 || !strings.Contains(out, "no imported models") || !strings.Contains(out, builtin.ModelID()+"  built-in, default") {
		t.Fatalf("empty list: exit %d %q %q", code, out, errOut)
	}
	out, errOut, code = runCLI(t, getenv, "", "model", "import", model, "--name", "tiny", "--json")
	if code != 0 {
		t.Fatalf("import: exit %d %s", code, errOut)
	}
	var man embed.Manifest
	if err := json.Unmarshal([]byte(out), &man); err != nil || man.Dim != 32 || !strings.HasPrefix(man.ModelID, "cairn-tiny-bert@sha256:") || len(man.Files) < 5 {
		t.Fatalf("import output %q: %v", out, err)
	}
	if _, _, code = runCLI(t, getenv, "", "model", "import", model, "--name", "tiny"); code == 0 {
		t.Fatal("second import of the same name succeeded")
	}
	if _, err := os.Stat(filepath.Join(data, "models", "tiny", "model.onnx")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the import kept model.onnx next to model.safetensors: %v", err)
	}
	out, _, code = runCLI(t, getenv, "", "model", "list", "--verify")
	if code != 0 || !strings.Contains(out, "built-in\n") || !strings.Contains(out, " ok, default") {
		t.Fatalf("list: exit %d %q", code, out)
	}
	// --model builtin still chooses the built-in model.
	out, errOut, code = runCLI(t, getenv, "", "embed", "--model", "builtin", "--json", "hi")
	if code != 0 || strings.Count(out, ",") != builtin.Dim-1 {
		t.Fatalf("--model builtin: exit %d %q", code, errOut)
	}
	// The one imported model is found without --model.
	out, errOut, code = runCLI(t, getenv, "", "embed", "--json", "hi")
	if code != 0 || !strings.HasPrefix(out, "[") {
		t.Fatalf("embed with imported model: exit %d %q %q", code, out, errOut)
	}
	// CAIRN_MODEL by name.
	getenv2 := envMap(map[string]string{"CAIRN_DATA_DIR": data, "CAIRN_MODEL": "tiny"})
	if _, errOut, code = runCLI(t, getenv2, "", "embed", "hi"); code != 0 {
		t.Fatalf("CAIRN_MODEL: exit %d %q", code, errOut)
	}
	// Corruption is detected.
	os.WriteFile(filepath.Join(data, "models", "tiny", "config.json"), []byte("{}"), 0o644)
	out, _, _ = runCLI(t, getenv, "", "model", "list", "--verify")
	if !strings.Contains(out, "corrupt: config.json") {
		t.Fatalf("corruption not reported: %q", out)
	}
	// Importing something that is not a model fails before copying.
	if _, errOut, code = runCLI(t, getenv, "", "model", "import", t.TempDir(), "--name", "bad"); code == 0 || !strings.Contains(errOut, "does not load") {
		t.Fatalf("bad import: exit %d %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(data, "models", "bad")); err == nil {
		t.Fatal("a failed import left a directory")
	}
}

func TestModelPullOffline(t *testing.T) {
	data := t.TempDir()
	// An endpoint that refuses connections stands in for "no network".
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data, "CAIRN_HF_ENDPOINT": "http://127.0.0.1:1"})
	_, errOut, code := runCLI(t, getenv, "", "model", "pull", "sentence-transformers/all-MiniLM-L6-v2")
	if code != 1 || !strings.Contains(errOut, "no network?") || !strings.Contains(errOut, "cairn model import DIR") {
		t.Fatalf("offline pull: exit %d %q", code, errOut)
	}
	if _, _, code = runCLI(t, getenv, "", "model", "pull", "no-slash"); code != 2 {
		t.Fatalf("bad name: exit %d", code)
	}
}
