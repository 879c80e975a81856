package server_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/cairnapi"
	"github.com/cairn-dev/cairn/cmd/cairn/server"
)

// TestServer: cairn's API and /metrics need the token, the Chroma side is
// routed untouched, and /metrics counts requests by route pattern and shows
// the engine's vector store.
func TestServer(t *testing.T) {
	srv := newFront(t, server.Options{AuthToken: "s3cret"})
	get := func(path, token string) (int, string) {
		t.Helper()
		hdr := map[string]string{}
		if token != "" {
			hdr["Authorization"] = "Bearer " + token
		}
		r := send(t, srv, "GET", path, "", hdr)
		return r.code, r.body
	}
	if code, _ := get("/metrics", ""); code != 401 {
		t.Errorf("/metrics without a token: %d, want 401", code)
	}
	if code, _ := get(cairnapi.Prefix+"/stats", "wrong"); code != 401 {
		t.Errorf("cairn API with a wrong token: %d, want 401", code)
	}
	if code, _ := get(cairnapi.Prefix+"/stats", "s3cret"); code != 200 {
		t.Errorf("cairn API with the token: %d, want 200", code)
	}
	if code, body := get("/api/v2/tenants/t1/databases/d1/collections/c1", ""); code != 418 || body != "chroma /api/v2/tenants/t1/databases/d1/collections/c1" {
		t.Errorf("Chroma route: %d %q", code, body)
	}
	code, body := get("/metrics", "s3cret")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`cairn_http_requests_total{api="chroma",code="418",route="GET /api/v2/tenants/{tenant}/databases/{database}/collections/{collection}"} 1`,
		`cairn_http_requests_total{api="cairn",code="200",route="GET /api/cairn/v1/stats"} 1`,
		`cairn_http_requests_total{api="metrics",code="401",route="/metrics"} 1`,
		"cairn_vector_collections_loaded 0",
		"cairn_vector_records_loaded 0",
		"cairn_embedding_queue 0",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s\n%s", want, body)
		}
	}
}
