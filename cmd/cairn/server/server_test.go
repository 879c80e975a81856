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
)

// TestServer: cairn's API and /metrics need the token, the Chroma side is
// routed untouched, and /metrics counts requests by route pattern and shows
// the engine's vector store.
func TestServer(t *testing.T) {
	eng, err := engine.Open(context.Background(), t.TempDir(), engine.Options{VectorStore: engine.VectorStoreOptions{Open: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	own, err := cairnapi.New(cairnapi.Options{Engine: eng, MaxBodyBytes: 1 << 20, MaxLimit: 100, MaxDepth: 16})
	if err != nil {
		t.Fatal(err)
	}
	chroma := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, "chroma "+r.URL.Path)
	})
	srv := httptest.NewServer(server.New(server.Options{
		Engine: eng, Chroma: chroma, Cairn: own, AuthToken: "s3cret",
	}))
	t.Cleanup(srv.Close)

	get := func(path, token string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d, want 401", code)
	}
	if code, _ := get(cairnapi.Prefix+"/stats", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("cairn API with a wrong token: %d, want 401", code)
	}
	if code, _ := get(cairnapi.Prefix+"/stats", "s3cret"); code != http.StatusOK {
		t.Errorf("cairn API with the token: %d, want 200", code)
	}
	if code, body := get("/api/v2/tenants/t1/databases/d1/collections/c1", ""); code != http.StatusTeapot || body != "chroma /api/v2/tenants/t1/databases/d1/collections/c1" {
		t.Errorf("Chroma route: %d %q", code, body)
	}
	code, body := get("/metrics", "s3cret")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`cairn_http_requests_total{api="chroma",route="GET /api/v2/tenants/{tenant}/databases/{database}/collections/{collection}",code="418"} 1`,
		`cairn_http_requests_total{api="cairn",route="GET /api/cairn/v1/stats",code="200"} 1`,
		`cairn_http_requests_total{api="metrics",route="/metrics",code="401"} 1`,
		"cairn_vector_collections_loaded 0",
		"cairn_vector_records_loaded 0",
		"cairn_embedding_queue 0",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s\n%s", want, body)
		}
	}
}
