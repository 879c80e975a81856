package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// serveProc is a real `cairn serve` process.
type serveProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe starts `cairn serve --port 0 --json` and reads the URL it
// prints.
func startServe(t *testing.T, bin, data string, extra ...string) *serveProc {
	t.Helper()
	args := append([]string{"serve", "--data-dir", data, "--port", "0", "--json"}, extra...)
	return startServeCmd(t, exec.Command(bin, args...))
}

// startServeCmd starts cmd, a `cairn serve --json` command line, and reads
// the URL it prints.
func startServeCmd(t *testing.T, cmd *exec.Cmd) *serveProc {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no address: %v\nstderr:\n%s", err, p.stderr.String())
	}
	var info struct{ URL string }
	if err := json.Unmarshal([]byte(line), &info); err != nil || info.URL == "" {
		t.Fatalf("serve's first line %q is not {\"url\":...}: %v", line, err)
	}
	p.url = info.URL
	return p
}

func httpDo(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeEndToEnd runs a real `cairn serve`: both APIs, token auth,
// metrics, and a graceful SIGTERM that lets an in-flight request finish;
// the data is there after a restart.
func TestServeEndToEnd(t *testing.T) {
	bin := buildCairn(t)
	data := t.TempDir()
	const token = "t0ken"
	p := startServe(t, bin, data, "--auth-token", token)

	// Heartbeat is open, as in Chroma; everything else needs the token.
	if code, _ := httpDo(t, "GET", p.url+"/api/v2/heartbeat", "", ""); code != 200 {
		t.Errorf("heartbeat without token = %d", code)
	}
	for _, u := range []string{"/api/cairn/v1/channels", "/metrics", "/api/v2/tenants/default_tenant/databases/default_database/collections"} {
		if code, _ := httpDo(t, "GET", p.url+u, "", ""); code != http.StatusUnauthorized && code != http.StatusForbidden {
			t.Errorf("GET %s without token = %d, want 401/403", u, code)
		}
		if code, body := httpDo(t, "GET", p.url+u, token, ""); code != 200 {
			t.Errorf("GET %s with token = %d %s", u, code, body)
		}
	}
	// X-Chroma-Token works too.
	req, _ := http.NewRequest("GET", p.url+"/api/cairn/v1/agents", nil)
	req.Header.Set("X-Chroma-Token", token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("X-Chroma-Token: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	code, body := httpDo(t, "POST", p.url+"/api/cairn/v1/notes", token, `{"agent":"a1","content":"first lesson: pin the chroma bindings"}`)
	if code != http.StatusCreated {
		t.Fatalf("note = %d %s", code, body)
	}
	code, body = httpDo(t, "POST", p.url+"/api/v2/tenants/default_tenant/databases/default_database/collections", token, `{"name":"docs"}`)
	if code != 200 {
		t.Fatalf("create collection = %d %s", code, body)
	}

	_, metrics := httpDo(t, "GET", p.url+"/metrics", token, "")
	for _, want := range []string{
		`cairn_http_requests_total{api="cairn",code="201",route="POST /api/cairn/v1/notes"} 1`,
		`cairn_http_requests_total{api="chroma",code="200",route="POST /api/v2/tenants/{tenant}/databases/{database}/collections"} 1`,
		`cairn_http_request_duration_seconds_bucket{api="cairn",route="POST /api/cairn/v1/notes",le="+Inf"} 1`,
		"# TYPE cairn_vector_records_loaded gauge",
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q:\n%s", want, metrics)
		}
	}

	// An in-flight request: headers and half the body sent, then SIGTERM.
	host := strings.TrimPrefix(p.url, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	payload := `{"agent":"a1","content":"written while shutting down"}`
	fmt.Fprintf(conn, "POST /api/cairn/v1/notes HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", host, token, len(payload), payload[:10])
	// Wait until the server is reading the request (it is then active, not
	// idle): its body is held in the body budget.
	reading := fmt.Sprintf("\ncairn_http_body_budget_bytes_in_use %d\n", len(payload))
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, m := httpDo(t, "GET", p.url+"/metrics", token, ""); strings.Contains(m, reading) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never started reading the in-flight request")
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the server is draining now
	if _, err := io.WriteString(conn, payload[10:]); err != nil {
		t.Fatalf("finishing the in-flight request: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("in-flight request got no answer: %v\nstderr:\n%s", err, p.stderr.String())
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("in-flight request = %d, want 201", resp.StatusCode)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("serve exited with %v after SIGTERM\nstderr:\n%s", err, p.stderr.String())
	}

	// Restart: both writes and the collection are there.
	p = startServe(t, bin, data, "--auth-token", token)
	_, body = httpDo(t, "GET", p.url+"/api/cairn/v1/agents/a1/notes", token, "")
	if !strings.Contains(body, "written while shutting down") || !strings.Contains(body, "pin the chroma bindings") {
		t.Errorf("notes after restart: %s", body)
	}
	if _, body = httpDo(t, "GET", p.url+"/api/v2/tenants/default_tenant/databases/default_database/collections/docs", token, ""); !strings.Contains(body, `"docs"`) {
		t.Errorf("collection after restart: %s", body)
	}
}

func TestServeRefusals(t *testing.T) {
	bin := buildCairn(t)
	// A taken port: exit 2 with a clear message, before opening anything.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--port", port}, "already in use"},
		{[]string{"--host", "0.0.0.0", "--port", "0"}, "without a token"},
		{[]string{"--port", "99999"}, "--port"},
	} {
		cmd := exec.Command(bin, append([]string{"serve", "--data-dir", t.TempDir()}, c.args...)...)
		out, err := cmd.CombinedOutput()
		var xe *exec.ExitError
		if !errors.As(err, &xe) || xe.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("serve %v: %v, output %q; want exit 2 naming %q", c.args, err, out, c.want)
		}
	}
}
