package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeBoundsConnections: with limits from config.toml, a stalled body
// does not hold its connection past read_timeout, a body larger than the
// budget left by others is refused 503 with a JSON body, and a foreign Host
// is refused.
func TestServeBoundsConnections(t *testing.T) {
	bin := buildCairn(t)
	data := t.TempDir()
	conf := "[server]\nread_timeout = \"8s\"\nmax_body_bytes = 4096\nbody_budget_bytes = 6000\n"
	if err := os.WriteFile(filepath.Join(data, "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, bin, data)
	host := strings.TrimPrefix(p.url, "http://")

	// A body announced at 4000 bytes and stalled after 10: it holds 4000
	// bytes of the 6000 budget until the server gives up on it (seen in
	// /metrics). Meanwhile another 3000-byte body does not fit: 503, JSON,
	// retry later.
	stalled, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	fmt.Fprintf(stalled, "POST /api/cairn/v1/notes HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{\"agent\":", host)
	held := false
	for deadline := time.Now().Add(5 * time.Minute); !held && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		_, m := httpDo(t, "GET", p.url+"/metrics", "", "")
		held = strings.Contains(m, "\ncairn_http_body_budget_bytes_in_use 4000\n")
	}
	if !held {
		t.Fatalf("the stalled body never held its bytes of the budget")
	}
	big := `{"agent":"a","content":"` + strings.Repeat("x", 2950) + `"}`
	if code, body := httpDo(t, "POST", p.url+"/api/cairn/v1/notes", "", big); code != http.StatusServiceUnavailable || !strings.HasPrefix(body, `{"error":"unavailable"`) {
		t.Errorf("a body over the budget left: %d %s, want 503 unavailable", code, body)
	}

	// The stalled connection is closed by the server (read_timeout 8s);
	// the deadline here only guards against a hang.
	_ = stalled.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(stalled), nil)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		t.Errorf("the server kept a stalled body's connection open")
	case err == nil:
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("stalled body answered %d", resp.StatusCode)
		}
	}
	// With the budget back, the same body is stored.
	if code, body := httpDo(t, "POST", p.url+"/api/cairn/v1/notes", "", big); code != http.StatusCreated {
		t.Errorf("the body once the budget is free: %d %s", code, body)
	}
	// Over max_body_bytes from config: 413.
	if code, _ := httpDo(t, "POST", p.url+"/api/cairn/v1/notes", "", `{"agent":"a","content":"`+strings.Repeat("y", 5000)+`"}`); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over max_body_bytes: %d, want 413", code)
	}
	// A rebinding name is refused.
	req, _ := http.NewRequest("GET", p.url+"/api/cairn/v1/stats", nil)
	req.Host = "attacker.example"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: %v %v, want 403", resp, err)
	} else {
		resp.Body.Close()
	}
}

// TestLargeFilterIsUsageError: a where filter over the engine's limits is
// bad input on the CLI (exit 2 naming the limit), not a SQLite failure.
func TestLargeFilterIsUsageError(t *testing.T) {
	bin := buildCairn(t)
	parts := make([]string, 999)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"word_count":%d}`, i)
	}
	cmd := exec.Command(bin, "--data-dir", t.TempDir(), "search", "--mode", "keyword", "--where", `{"$or":[`+strings.Join(parts, ",")+`]}`, "anything")
	out, err := cmd.CombinedOutput()
	var xe *exec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() != 2 || !strings.Contains(string(out), "limit of 500") {
		t.Errorf("search with 999 branches: %v %s, want exit 2 naming the limit", err, out)
	}
}

// TestServeDiskFull: on a full disk (a small tmpfs, in a mount namespace
// of its own) writes on both APIs answer 507 saying the disk is full,
// naming no path, and reads keep working. Skipped where mount namespaces
// are not allowed.
func TestServeDiskFull(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare")
	}
	if out, err := exec.Command("unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs \"$0\"", t.TempDir()).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs in a mount namespace: %v %s", err, out)
	}
	bin := buildCairn(t)
	data := t.TempDir()
	p := startServeCmd(t, exec.Command("unshare", "-m", "sh", "-c",
		`mount -t tmpfs -o size=3m tmpfs "$0" && exec "$1" serve --data-dir "$0" --port 0 --json`, data, bin))
	const colls = "/api/v2/tenants/default_tenant/databases/default_database/collections"
	code, body := httpDo(t, "POST", p.url+colls, "", `{"name":"docs"}`)
	if code != 200 {
		t.Fatalf("create collection: %d %s", code, body)
	}
	var coll struct{ ID string }
	if err := json.Unmarshal([]byte(body), &coll); err != nil {
		t.Fatal(err)
	}
	doc := strings.Repeat("lorem ipsum ", 20_000)
	fill := func(api, path string, body func(i int) string) (int, string) {
		t.Helper()
		for i := range 400 {
			code, msg := httpDo(t, "POST", p.url+path, "", body(i))
			if code >= 300 {
				return code, msg
			}
		}
		t.Fatalf("%s: 400 writes of %d bytes fitted on a 3 MiB disk", api, len(doc))
		return 0, ""
	}
	code, msg := fill("chroma", colls+"/"+coll.ID+"/add", func(i int) string {
		return fmt.Sprintf(`{"ids":["r%d"],"embeddings":[[1,2,3]],"documents":["%d %s"]}`, i, i, doc)
	})
	if code != http.StatusInsufficientStorage || !strings.Contains(msg, "Disk full") || strings.Contains(msg, data) || strings.Contains(msg, "/") {
		t.Errorf("chroma add on a full disk: %d %s, want 507 saying the disk is full, no path", code, msg)
	}
	code, msg = fill("cairn", "/api/cairn/v1/notes", func(i int) string {
		return fmt.Sprintf(`{"agent":"a","content":"%d %s"}`, i, doc)
	})
	if code != http.StatusInsufficientStorage || !strings.Contains(msg, `"disk_full"`) || strings.Contains(msg, data) || strings.Contains(msg, "/") {
		t.Errorf("cairn note on a full disk: %d %s, want 507 disk_full, no path", code, msg)
	}
	if code, body := httpDo(t, "GET", p.url+colls+"/"+coll.ID+"/count", "", ""); code != 200 {
		t.Errorf("count on a full disk: %d %s", code, body)
	}
	if code, body := httpDo(t, "GET", p.url+"/api/cairn/v1/agents", "", ""); code != 200 {
		t.Errorf("agents on a full disk: %d %s", code, body)
	}
}
