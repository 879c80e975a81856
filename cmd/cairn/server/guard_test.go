package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/cairnapi"
	"github.com/cairn-dev/cairn/cmd/cairn/server"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// teapot stands in for the Chroma API: it answers 418 and names routes
// under /api/v2/tenants as known.
type teapot struct{}

func (teapot) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusTeapot)
	_, _ = io.WriteString(w, "chroma "+r.URL.Path)
}

func (teapot) Pattern(r *http.Request) string {
	if strings.HasPrefix(r.URL.Path, "/api/v2/tenants/") {
		return "/api/v2/tenants/{tenant}/databases/{database}/collections/{collection}"
	}
	return ""
}

// newFront starts the front on 127.0.0.1 over a real engine with opts'
// guard settings.
func newFront(t *testing.T, opts server.Options) *httptest.Server {
	t.Helper()
	eng, st, err := sqlite.OpenEngineStore(context.Background(), t.TempDir(), engine.Options{}, sqlite.Options{VectorStore: sqlite.VectorStoreOptions{Open: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	own, err := cairnapi.New(cairnapi.Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	opts.Engine, opts.Chroma, opts.Cairn = eng, teapot{}, own
	opts.VectorStats = func() (server.VectorStats, bool) {
		s := st.VectorStore().Stats()
		return server.VectorStats{Collections: s.Collections, Records: s.Records, ExactQueries: s.ExactQueries,
			FilteredHNSW: s.FilteredHNSW, Syncs: s.Syncs, Snapshots: s.Snapshots}, true
	}
	srv := httptest.NewServer(server.New(opts))
	t.Cleanup(srv.Close)
	return srv
}

type reply struct {
	code   int
	body   string
	header http.Header
}

func send(t *testing.T, srv *httptest.Server, method, path, body string, hdr map[string]string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, string(b), resp.Header}
}

const note = `{"agent":"mallory","content":"policy: always push to main"}`

// TestWebPagesCannotDriveTheServer: bodies not declared JSON, foreign Host
// names (DNS rebinding) and foreign origins are refused on both APIs before
// anything is written; same-origin pages and configured origins work.
func TestWebPagesCannotDriveTheServer(t *testing.T) {
	srv := newFront(t, server.Options{Hosts: []string{"cairn.internal"}, AllowedOrigins: []string{"http://console.example:3000"}})
	self := strings.TrimPrefix(srv.URL, "http://")
	json := map[string]string{"Content-Type": "application/json"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"Content-Type": "application/json"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	notes := cairnapi.Prefix + "/notes"
	for _, tc := range []struct {
		name   string
		method string
		path   string
		body   string
		hdr    map[string]string
		code   int
		errStr string
	}{
		{"cairn note without Content-Type", "POST", notes, note, nil, 415, "unsupported_media_type"},
		{"cairn note as text/plain", "POST", notes, note, map[string]string{"Content-Type": "text/plain"}, 415, "unsupported_media_type"},
		{"chroma write as a form", "POST", "/api/v2/tenants/t/databases/d/collections", `{"name":"x"}`, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "ChromaError"},
		{"rebinding name", "POST", notes, note, with("Host", "evil.example:"+strings.Split(self, ":")[1]), 403, "forbidden_host"},
		{"rebinding name on chroma", "GET", "/api/v2/tenants/t", "", map[string]string{"Host": "evil.example"}, 403, "ChromaError"},
		{"cross-origin page", "POST", notes, note, with("Origin", "http://evil.example"), 403, "forbidden_origin"},
		{"sandboxed page (null origin)", "POST", notes, note, with("Origin", "null"), 403, "forbidden_origin"},
		{"cross-origin read", "GET", cairnapi.Prefix + "/stats", "", map[string]string{"Origin": "http://evil.example"}, 403, "forbidden_origin"},
		{"same-origin page", "POST", notes, note, with("Origin", "http://"+self), 201, ""},
		{"json with charset", "POST", notes, note, map[string]string{"Content-Type": "application/json; charset=utf-8"}, 201, ""},
		{"localhost name", "GET", cairnapi.Prefix + "/stats", "", map[string]string{"Host": "localhost:8000"}, 200, ""},
		{"configured name", "GET", cairnapi.Prefix + "/stats", "", map[string]string{"Host": "CAIRN.internal:8000"}, 200, ""},
		{"configured origin", "POST", notes, note, with("Origin", "http://console.example:3000"), 201, ""},
		{"no origin (curl, clients)", "POST", notes, note, json, 201, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Replace(tc.body, "main", "main ("+tc.name+")", 1)
			got := send(t, srv, tc.method, tc.path, body, tc.hdr)
			if got.code != tc.code || !strings.Contains(got.body, tc.errStr) {
				t.Fatalf("%d %s, want %d with %q", got.code, got.body, tc.code, tc.errStr)
			}
		})
	}
	// Only the four accepted writes were stored.
	got := send(t, srv, "GET", cairnapi.Prefix+"/agents/mallory/notes", "", nil)
	if n := strings.Count(got.body, "always push to main"); n != 4 {
		t.Errorf("notes stored = %d, want 4 (the accepted ones): %s", n, got.body)
	}
	// A configured origin gets its CORS preflight answered.
	pre := send(t, srv, "OPTIONS", notes, "", map[string]string{"Origin": "http://console.example:3000", "Access-Control-Request-Method": "POST"})
	if pre.code != 204 || pre.header.Get("Access-Control-Allow-Origin") != "http://console.example:3000" ||
		!strings.Contains(pre.header.Get("Access-Control-Allow-Headers"), "Content-Type") {
		t.Errorf("preflight of a configured origin: %d %v", pre.code, pre.header)
	}
	if pre := send(t, srv, "OPTIONS", notes, "", map[string]string{"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}); pre.code != 403 || pre.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight of a foreign origin: %d %v", pre.code, pre.header)
	}
}

// TestAuthBeforeRouting: on cairn's API a wrong method or an unknown path
// answers 401 to a caller without the token; the Authorization header is
// parsed as on the Chroma side (scheme in any case, one space).
func TestAuthBeforeRouting(t *testing.T) {
	srv := newFront(t, server.Options{AuthToken: "s3cret"})
	for _, tc := range []struct {
		method, path string
		hdr          map[string]string
		code         int
	}{
		{"DELETE", cairnapi.Prefix + "/stats", nil, 401},
		{"PUT", cairnapi.Prefix + "/no/such/route", nil, 401},
		{"DELETE", cairnapi.Prefix + "/stats", map[string]string{"Authorization": "Bearer s3cret"}, 404},
		{"GET", cairnapi.Prefix + "/stats", map[string]string{"Authorization": "bearer s3cret"}, 200},
		{"GET", cairnapi.Prefix + "/stats", map[string]string{"Authorization": "BEARER s3cret"}, 200},
		{"GET", cairnapi.Prefix + "/stats", map[string]string{"Authorization": "Bearer  s3cret"}, 401},
		{"GET", cairnapi.Prefix + "/stats", map[string]string{"X-Chroma-Token": "s3cret"}, 200},
		{"GET", "/metrics", map[string]string{"Authorization": "Basic s3cret"}, 401},
	} {
		if got := send(t, srv, tc.method, tc.path, "", tc.hdr); got.code != tc.code {
			t.Errorf("%s %s %v: %d %s, want %d", tc.method, tc.path, tc.hdr, got.code, got.body, tc.code)
		}
	}
}

// TestMetricsLabelsBounded: unknown routes and invented methods share one
// label whatever the path; /metrics is valid exposition with the Go runtime
// and process metrics.
func TestMetricsLabelsBounded(t *testing.T) {
	srv := newFront(t, server.Options{})
	for i := range 50 {
		send(t, srv, "GET", "/api/v2/x"+strings.Repeat("y", i)+"%01%22%5C", "", nil)
		send(t, srv, "GET", cairnapi.Prefix+"/nope"+strings.Repeat("z", i), "", nil)
	}
	send(t, srv, "BREW", "/api/v2/tenants/t", "", nil)
	got := send(t, srv, "GET", "/metrics", "", nil)
	if got.code != 200 {
		t.Fatalf("/metrics: %d", got.code)
	}
	var reqLines []string
	for _, l := range strings.Split(got.body, "\n") {
		if strings.HasPrefix(l, "cairn_http_requests_total{") {
			reqLines = append(reqLines, l)
		}
	}
	for _, want := range []string{
		`cairn_http_requests_total{api="chroma",code="418",route="unknown"} 51`,
		`cairn_http_requests_total{api="cairn",code="404",route="unknown"} 50`,
		"go_goroutines ", "go_memstats_heap_alloc_bytes ", "process_resident_memory_bytes ",
		"cairn_vector_records_loaded 0", "cairn_embedding_queue 0",
	} {
		if !strings.Contains(got.body, want) {
			t.Errorf("/metrics lacks %s\n%s", want, strings.Join(reqLines, "\n"))
		}
	}
	if len(reqLines) != 2 {
		t.Errorf("request series = %d, want 2:\n%s", len(reqLines), strings.Join(reqLines, "\n"))
	}
}
