package chromaapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/racedetector"
)

// pyDir holds the Python scenario and its environment (.venv, installed by
// `make py-env` from requirements.txt).
var pyDir = filepath.Join("..", "..", "..", "testdata", "py")

// pyScenarioDivergences declares, by step name, where cairn deliberately
// answers the Python client differently from Chroma 1.0.0.
var pyScenarioDivergences = map[string]string{
	"rename onto existing name": "Chroma 1.0.0 answers 500 (a raw SQLite UNIQUE constraint message, " +
		"InternalError); cairn answers 409 ChromaError, like creating a duplicate",
	"get where_document invalid regex": "the message starts like Chroma's but its detail is Go regexp's " +
		"error text, not the Rust regex crate's (same class)",
	"get collection by id": "Chroma 1.0.0 lacks C/by-id/{id} (404 with an empty body: a bare Exception); " +
		"cairn serves it so the client's get_collection_by_id works",
	"add NaN embedding": "Chroma 1.0.0 stores NaN (base64 on the wire) and answers null distances for it; " +
		"cairn refuses non-finite embeddings (InvalidArgumentError), as it does for JSON ones",
}

// chromaPython returns the interpreter of the Python environment that has
// the chromadb client, or skips (fails under CI=true) without one.
func chromaPython(t *testing.T) string {
	t.Helper()
	var candidates []string
	if p := os.Getenv("CAIRN_PYTHON"); p != "" {
		candidates = append(candidates, p)
	}
	if p, err := filepath.Abs(filepath.Join(pyDir, ".venv", "bin", "python")); err == nil {
		candidates = append(candidates, p)
	}
	var why string
	for _, p := range candidates {
		out, err := exec.Command(p, "-c", "import chromadb; print(chromadb.__version__)").CombinedOutput()
		if err == nil {
			return p
		}
		why += fmt.Sprintf("\n%s: %v %s", p, err, bytes.TrimSpace(out))
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no Python environment with the chromadb client (run `make py-env`):%s", why)
	}
	t.Skipf("no Python environment with the chromadb client; run `make py-env`:%s", why)
	return ""
}

// buildCairnBinary builds cmd/cairn, static as shipped.
func buildCairnBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cairn")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/cairn-dev/cairn/cmd/cairn")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startCairnServe runs `cairn serve` on 127.0.0.1 and returns its URL once
// it answers; the process is killed when the test ends.
func startCairnServe(t *testing.T, bin string, extra ...string) string {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(bin, append([]string{"serve", "--data-dir", filepath.Join(dir, "data"), "--port", strconv.Itoa(port)}, extra...)...)
	log, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	if !awaitHeartbeat(url, 3*time.Minute) {
		out, _ := os.ReadFile(log.Name())
		t.Fatalf("cairn serve did not answer within 60s:\n%s", out)
	}
	return url
}

// pyClient is one version of the Python chromadb client: the interpreter,
// and a directory put first on PYTHONPATH (empty for the client installed
// in the environment itself).
type pyClient struct {
	version, python, path string
}

// pyClients returns the client versions `make py-env` installs: 1.5.9 in
// the environment, 1.0.21 (the line of the Chroma 1.0.0 server) in
// .venv/chromadb-1.0.
func pyClients(t *testing.T, python string) map[string]pyClient {
	t.Helper()
	old := filepath.Join(filepath.Dir(filepath.Dir(python)), "chromadb-1.0")
	if _, err := os.Stat(filepath.Join(old, "chromadb")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the chromadb 1.0 client is not installed (run `make py-env`): %v", err)
		}
		t.Logf("the chromadb 1.0 client is not installed (run `make py-env`): %v", err)
		return map[string]pyClient{"1.5.9": {version: "1.5.9", python: python}}
	}
	return map[string]pyClient{"1.5.9": {version: "1.5.9", python: python},
		"1.0.21": {version: "1.0.21", python: python, path: old}}
}

// runPyScenario runs the Python scenario against url and returns its steps
// by name, in order.
func runPyScenario(t *testing.T, client pyClient, url, database string, extra ...string) (map[string]scenarioLine, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a hang guard: generous on a loaded machine
	defer cancel()
	script, _ := filepath.Abs(filepath.Join(pyDir, "chroma_client_scenario.py"))
	cmd := exec.CommandContext(ctx, client.python, append([]string{script, url, database}, extra...)...)
	cmd.Dir = t.TempDir() // nothing the client might write lands in the repository
	cmd.Env = append(os.Environ(), "PYTHONPATH="+client.path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("python chroma_client_scenario.py %s: %v\nstdout:\n%s\nstderr:\n%s", url, err, stdout.String(), stderr.String())
	}
	steps, order := parseScenario(t, stdout.String())
	if s := steps["client version"]; string(s.OK) != `"`+client.version+`"` {
		t.Fatalf("the scenario ran chromadb %s, want %s", s, client.version)
	}
	if s := steps["network beyond loopback"]; s.Error != "" || string(s.OK) != "[]" {
		t.Errorf("the Python client tried the network beyond loopback: %s", s)
	}
	return steps, order
}

// TestPythonClient runs testdata/py/chroma_client_scenario.py with the real
// Python chromadb client (HttpClient and AsyncHttpClient) against a real
// `cairn serve` and against the real Chroma 1.0.0 server, and compares every
// step: results, and the exception class and message of every error. Then it
// checks the client's token settings against `cairn serve --auth-token`.
func TestPythonClient(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("builds cairn and runs the Python client against two servers: left to the run without -race")
	}
	clients := pyClients(t, chromaPython(t))
	bin := buildCairnBinary(t)
	for _, version := range []string{"1.5.9", "1.0.21"} {
		if client, ok := clients[version]; ok {
			t.Run("scenario/"+version, func(t *testing.T) { pyScenario(t, client, bin, version) })
		}
	}
	t.Run("token", func(t *testing.T) { pyToken(t, clients["1.5.9"], bin) })
}

func pyScenario(t *testing.T, client pyClient, bin, version string) {
	db := "py_scenario_" + strings.ReplaceAll(version, ".", "_")
	comparePyScenario(t, client, chromaURL(t), startCairnServe(t, bin), db)
}

// comparePyScenario runs the Python scenario against the real Chroma
// server and against cairn, in database db, and compares every step.
func comparePyScenario(t *testing.T, client pyClient, chroma, cairn, db string) {
	t.Helper()
	want, order := runPyScenario(t, client, chroma, db)
	got, _ := runPyScenario(t, client, cairn, db)
	if len(want) < 100 {
		t.Fatalf("scenario produced only %d steps", len(want))
	}
	compareScenario(t, want, got, order, pyScenarioDivergences, cairn, chroma)
}

// pyToken: both of the client's token transport headers work, and a
// missing or wrong token raises its ChromaAuthError (the Chroma 1.0.0 server
// the scenario compares with has no auth).
func pyToken(t *testing.T, client pyClient, bin string) {
	const token = "s3cret-token"
	url := startCairnServe(t, bin, "--auth-token", token)
	steps, _ := runPyScenario(t, client, url, "py_token", "--token", token)
	for _, name := range []string{"no token: connect", "wrong token: connect"} {
		if s := steps[name]; s.Error != "ChromaAuthError" {
			t.Errorf("%s: got %s, want ChromaAuthError", name, s)
		}
	}
	for _, name := range []string{"bearer token: add and query", "X-Chroma-Token: add and query"} {
		s := steps[name]
		var res struct{ IDs [][]string }
		if s.Error != "" || json.Unmarshal(s.OK, &res) != nil || len(res.IDs) != 1 || len(res.IDs[0]) != 1 || res.IDs[0][0] != "a" {
			t.Errorf("%s: got %s, want one result with id a", name, s)
		}
	}
}
