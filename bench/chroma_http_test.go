package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkChromaHTTP compares `cairn serve` (its Chroma API) with the real Chroma 1.0.0
// server through HTTP, with the same JS client (chromadb 3.5.0), the same
// data (seeded, clustered, unit vectors) and the same queries:
// testdata/js/bench_http.mjs. Run it alone (it takes minutes at 100,000):
//
//	go test ./bench -run '^$' -bench ChromaHTTP -benchtime 1x -timeout 60m
//
// CAIRN_BENCH_CHROMA_N overrides the number of records (default 100000),
// CAIRN_BENCH_CHROMA_DIM the dimension (default 384).
func BenchmarkChromaHTTP(b *testing.B) {
	n := envInt("CAIRN_BENCH_CHROMA_N", 100000)
	dim := envInt("CAIRN_BENCH_CHROMA_DIM", 384)
	jsDir, _ := filepath.Abs(filepath.Join("..", "testdata", "js"))
	if _, err := os.Stat(filepath.Join(jsDir, "node_modules", "chromadb")); err != nil {
		if os.Getenv("CI") == "true" {
			b.Fatalf("JS peers not installed: %v", err)
		}
		b.Skipf("JS peers not installed: %v", err)
	}
	for i := 0; i < b.N; i++ {
		// Both servers run; the script interleaves every add batch and every
		// query between them (one request in flight at a time), so both see
		// the same machine load and the ratios hold on a busy machine.
		cairnURL, stopCairn := startCairn(b)
		chromaURL, stopChroma := startRealChroma(b, jsDir)
		rs := runBenchScript(b, jsDir, cairnURL+","+chromaURL, n, dim)
		stopCairn()
		stopChroma()
		report(b, rs[0], rs[1])
	}
}

type benchResult struct {
	N          int     `json:"n"`
	Dim        int     `json:"dim"`
	Count      int     `json:"count"`
	AddSeconds float64 `json:"add_seconds"`
	AddPerSec  float64 `json:"add_per_sec"`
	Results    []struct {
		Name   string   `json:"name"`
		P50    float64  `json:"p50_ms"`
		P99    float64  `json:"p99_ms"`
		Mean   float64  `json:"mean_ms"`
		Recall *float64 `json:"recall_at_10"`
	} `json:"results"`
}

func report(b *testing.B, cairn, chroma benchResult) {
	b.Logf("n=%d dim=%d (cairn count %d, chroma count %d)", cairn.N, cairn.Dim, cairn.Count, chroma.Count)
	b.Logf("add: cairn %.0f rec/s, chroma %.0f rec/s, ratio %.2fx", cairn.AddPerSec, chroma.AddPerSec, cairn.AddPerSec/chroma.AddPerSec)
	b.ReportMetric(cairn.AddPerSec, "cairn-add-rec/s")
	b.ReportMetric(chroma.AddPerSec, "chroma-add-rec/s")
	short := []string{"unfiltered", "where10pct", "where1pct"}
	for i := range cairn.Results {
		c, h := cairn.Results[i], chroma.Results[i]
		b.Logf("%-22s p50 cairn %7.2f ms chroma %7.2f ms (ratio %.3f) | p99 cairn %7.2f chroma %7.2f | recall@10 cairn %.3f chroma %.3f",
			c.Name, c.P50, h.P50, c.P50/h.P50, c.P99, h.P99, deref(c.Recall), deref(h.Recall))
		if i < len(short) {
			b.ReportMetric(c.P50, short[i]+"-cairn-p50-ms")
			b.ReportMetric(h.P50, short[i]+"-chroma-p50-ms")
			b.ReportMetric(c.P99, short[i]+"-cairn-p99-ms")
			b.ReportMetric(h.P99, short[i]+"-chroma-p99-ms")
			b.ReportMetric(deref(c.Recall), short[i]+"-cairn-recall@10")
			b.ReportMetric(deref(h.Recall), short[i]+"-chroma-recall@10")
		}
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func runBenchScript(b *testing.B, jsDir, urls string, n, dim int) []benchResult {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--max-old-space-size=4096", filepath.Join(jsDir, "bench_http.mjs"), urls,
		"--n="+strconv.Itoa(n), "--dim="+strconv.Itoa(dim))
	cmd.Dir = jsDir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("bench_http.mjs %s: %v\n%s", urls, err, errb.String())
	}
	var rs []benchResult
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r benchResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			b.Fatalf("bench_http.mjs output %q: %v", line, err)
		}
		rs = append(rs, r)
	}
	if len(rs) != 2 {
		b.Fatalf("bench_http.mjs printed %d results, want 2", len(rs))
	}
	return rs
}

// startCairn builds cmd/cairn and runs `cairn serve` on a fresh data dir:
// the benchmark measures the real server, middleware included.
func startCairn(b *testing.B) (string, func()) {
	b.Helper()
	dir := b.TempDir()
	bin := filepath.Join(dir, "cairn")
	build := exec.Command("go", "build", "-o", bin, "./cmd/cairn")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/cairn: %v\n%s", err, out)
	}
	port := freeBenchPort(b)
	cmd := exec.Command(bin, "serve", "--data-dir", filepath.Join(dir, "data"), "--port", strconv.Itoa(port),
		"--log-requests=false", "--log-level", "warn")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
	}
	return waitHeartbeat(b, fmt.Sprintf("http://127.0.0.1:%d", port), stop), stop
}

func freeBenchPort(b *testing.B) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitHeartbeat(b *testing.B, url string, stop func()) string {
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(url + "/api/v2/heartbeat"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return url
			}
		}
	}
	stop()
	b.Fatalf("%s did not answer its heartbeat within 60s", url)
	return ""
}

func startRealChroma(b *testing.B, jsDir string) (string, func()) {
	b.Helper()
	port := freeBenchPort(b)
	dir := b.TempDir()
	cmd := exec.Command("node", filepath.Join(jsDir, "node_modules", "chromadb", "dist", "cli.mjs"), "run",
		"--path", filepath.Join(dir, "data"), "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	cmd.Dir = jsDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}
	return waitHeartbeat(b, fmt.Sprintf("http://127.0.0.1:%d", port), stop), stop
}
