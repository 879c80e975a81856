package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// metricSeries counts the series of one metric in a /metrics page.
func metricSeries(page, name string) int {
	n := 0
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, name+"{") {
			n++
		}
	}
	return n
}

// TestServeMetricsLabelsBounded: thousands of distinct unauthenticated
// requests whose tenant segment hides a slash (a%2F...) add no series to
// /metrics: route labels come from the route table, never from the path.
func TestServeMetricsLabelsBounded(t *testing.T) {
	bin := buildCairn(t)
	const token = "t0ken"
	p := startServe(t, bin, t.TempDir(), "--auth-token", token)
	series := func() int {
		t.Helper()
		code, page := httpDo(t, "GET", p.url+"/metrics", token, "")
		if code != 200 {
			t.Fatalf("/metrics: %d", code)
		}
		return metricSeries(page, "cairn_http_requests_total")
	}
	probe := func(i int) string {
		return fmt.Sprintf("%s/api/v2/tenants/a%%2F%d/databases/d/collections", p.url, i)
	}
	// One of each first, so the series the flood may legitimately use exist.
	if code, _ := httpDo(t, "GET", probe(0), "", ""); code != http.StatusUnauthorized {
		t.Fatalf("unauthenticated probe: %d, want 401", code)
	}
	before := series()
	const n = 2000
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				resp, err := http.Get(probe(i + 1))
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	if after := series(); after > before+1 { // +1: the scrape's own 200 series
		t.Errorf("%d distinct 401 paths grew cairn_http_requests_total from %d to %d series", n, before, after)
	}
}

// TestServeAnswerBytesBounded is the crash reproduction scaled down: one
// record with a large document, then a small query asking for it with many
// query embeddings. With max_answer_bytes from config.toml the server
// answers 400 naming the limit instead of building the answer, and keeps
// serving. max_scan_bytes from the same file bounds a document filter.
func TestServeAnswerBytesBounded(t *testing.T) {
	bin := buildCairn(t)
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "config.toml"), []byte("[server]\nmax_answer_bytes = 1000000\nmax_scan_bytes = 150000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, bin, data)
	const colls = "/api/v2/tenants/default_tenant/databases/default_database/collections"
	code, body := httpDo(t, "POST", p.url+colls, "", `{"name":"big"}`)
	if code != 200 {
		t.Fatalf("create collection: %d %s", code, body)
	}
	var coll struct{ ID string }
	if err := json.Unmarshal([]byte(body), &coll); err != nil {
		t.Fatal(err)
	}
	recs := p.url + colls + "/" + coll.ID
	if code, body := httpDo(t, "POST", recs+"/add", "", `{"ids":["big"],"embeddings":[[1,0]],"documents":["`+strings.Repeat("x", 100_000)+`"]}`); code != 201 {
		t.Fatalf("add: %d %s", code, body)
	}
	query := `{"query_embeddings":[` + strings.TrimSuffix(strings.Repeat("[1,0],", 100), ",") + `],"n_results":1}`
	if len(query) > 1000 {
		t.Fatalf("the reproduction's query is %d bytes, want a small one", len(query))
	}
	code, body = httpDo(t, "POST", recs+"/query", "", query)
	if code != 400 || !strings.Contains(body, "max_answer_bytes") {
		t.Errorf("100 x a 100 KB document: %d %.200s, want 400 naming max_answer_bytes", code, body)
	}
	if code, body := httpDo(t, "POST", recs+"/query", "", `{"query_embeddings":[[1,0]],"n_results":1}`); code != 200 || !strings.Contains(body, `"ids":[["big"]]`) {
		t.Errorf("the same document once: %d %.200s", code, body)
	}
	// max_scan_bytes from config.toml bounds a document filter: two
	// clauses over the 100 KB document scan 200 KB.
	code, body = httpDo(t, "POST", recs+"/get", "", `{"where_document":{"$and":[{"$not_contains":"a"},{"$not_contains":"b"}]}}`)
	if code != 400 || !strings.Contains(body, "max_scan_bytes") {
		t.Errorf("a document filter over max_scan_bytes: %d %.200s, want 400 naming it", code, body)
	}
}

// TestNoteMetaFileBounded: --meta-file is read with a limit, so an endless
// file (/dev/zero) stops with exit 2 "invalid metadata: too large" instead of
// reading until the process runs out of memory (its address space is
// capped here, so a regression fails instead of eating the machine).
func TestNoteMetaFileBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	bin := buildCairn(t)
	cmd := exec.Command("sh", "-c", `ulimit -v 1000000 && exec "$0" --data-dir "$1" note --agent ann --meta-file /dev/zero hello`, bin, t.TempDir())
	cmd.Env = append(os.Environ(), "CAIRN_MODEL=none")
	out, err := cmd.CombinedOutput()
	var xe *exec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() != 2 || !strings.Contains(string(out), "invalid metadata: too large") || strings.Contains(string(out), "out of memory") {
		t.Errorf("note --meta-file /dev/zero: %v\n%.500s\nwant exit 2 saying invalid metadata: too large", err, out)
	}
}

// TestBackupTargetFull: a backup to a full device says the device holding
// the backup is full, naming its folder, not the data dir's (a small
// tmpfs in a mount namespace of its own; skipped where not allowed).
func TestBackupTargetFull(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare")
	}
	if out, err := exec.Command("unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs \"$0\"", t.TempDir()).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs in a mount namespace: %v %s", err, out)
	}
	bin := buildCairn(t)
	data, target := t.TempDir(), t.TempDir()
	note := exec.Command(bin, "--data-dir", data, "note", "--agent", "ann")
	// Random digits: an archive of them cannot compress below the tmpfs
	// (the backup's staging copy is in the data dir; only the archive is
	// written to the target).
	rng := rand.New(rand.NewPCG(1, 2))
	var filler strings.Builder
	for filler.Len() < 400_000 {
		fmt.Fprintf(&filler, "%05d ", rng.IntN(100_000))
	}
	note.Stdin = strings.NewReader(filler.String())
	note.Env = append(os.Environ(), "CAIRN_MODEL=none")
	if out, err := note.CombinedOutput(); err != nil {
		t.Fatalf("note: %v %s", err, out)
	}
	cmd := exec.Command("unshare", "-m", "sh", "-c", `mount -t tmpfs -o size=64k tmpfs "$0" && exec "$1" --data-dir "$2" backup "$0/b.cairn-backup"`, target, bin, data)
	cmd.Env = append(os.Environ(), "CAIRN_MODEL=none")
	out, err := cmd.CombinedOutput()
	var xe *exec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() == 0 || !strings.Contains(string(out), "no space left on the device holding "+target) || strings.Contains(string(out), "data dir") {
		t.Errorf("backup to a full device: %v %s, want a failure naming %s and not the data dir", err, out, target)
	}
}

// TestResultBytesFromConfig: server.max_result_bytes in config.toml bounds
// the results of a real `cairn serve` (cairn API) and of a real `cairn mcp`
// (through the official MCP SDK client): messages past it are left out
// whole and the answer says truncated with the limit.
func TestResultBytesFromConfig(t *testing.T) {
	bin := buildCairn(t)
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "config.toml"), []byte("[server]\nmax_result_bytes = 250000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, bin, data, "--model", "none")
	for i := range 3 {
		content := fmt.Sprintf("needle %d ", i) + strings.Repeat(fmt.Sprintf("word%d ", i), 100_000/7)
		if code, body := httpDo(t, "POST", p.url+"/api/cairn/v1/notes", "", `{"agent":"ann","content":"`+content+`"}`); code != 201 {
			t.Fatalf("note: %d %.200s", code, body)
		}
	}
	code, body := httpDo(t, "POST", p.url+"/api/cairn/v1/search", "", `{"query":"needle","mode":"keyword","limit":3}`)
	var res struct {
		Results        []any
		Truncated      bool  `json:"truncated"`
		MaxResultBytes int64 `json:"max_result_bytes"`
	}
	if err := json.Unmarshal([]byte(body), &res); code != 200 || err != nil || len(res.Results) != 2 || !res.Truncated || res.MaxResultBytes != 250_000 {
		t.Errorf("cairn API search over max_result_bytes: %d, %d results, truncated %v, max_result_bytes %d; want 2, true, 250000", code, len(res.Results), res.Truncated, res.MaxResultBytes)
	}
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(bin, "mcp", "--data-dir", data, "--model", "none")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "ann", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	out := callToolOK(ctx, t, cs, "search_messages", map[string]any{"query": "needle", "mode": "keyword", "limit": 3, "full": true})
	if hits, _ := out["results"].([]any); len(hits) != 2 || out["truncated"] != true || out["max_result_bytes"] != float64(250_000) {
		t.Errorf("MCP search over max_result_bytes: %d results, truncated %v, max_result_bytes %v; want 2, true, 250000", len(hits), out["truncated"], out["max_result_bytes"])
	}
}
