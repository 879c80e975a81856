package server_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/cairnapi"
	"github.com/cairn-dev/cairn/cmd/cairn/server"
)

// TestConsoleRoute: GET / and /console/ serve the console without the
// token (its files hold no data) while the API it calls still needs it;
// the Host check applies; other methods and paths still reach the Chroma
// API; the metrics name the console's two routes.
func TestConsoleRoute(t *testing.T) {
	srv := newFront(t, server.Options{AuthToken: "s3cret"})
	if got := send(t, srv, "GET", "/", "", nil); got.code != 200 || !strings.Contains(got.body, "cairn console") ||
		!strings.Contains(got.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("GET / = %d %v", got.code, got.header)
	}
	if got := send(t, srv, "GET", "/console/app.js", "", nil); got.code != 200 || !strings.Contains(got.body, "./api.js") {
		t.Errorf("GET /console/app.js = %d", got.code)
	}
	if got := send(t, srv, "GET", cairnapi.Prefix+"/stats", "", nil); got.code != 401 {
		t.Errorf("the API without the token = %d", got.code)
	}
	if got := send(t, srv, "GET", "/", "", map[string]string{"Host": "evil.example"}); got.code != 403 {
		t.Errorf("GET / from a rebound name = %d", got.code)
	}
	if got := send(t, srv, "POST", "/", "", nil); got.code != 418 {
		t.Errorf("POST / = %d, want the Chroma API's answer", got.code)
	}
	if got := send(t, srv, "GET", "/api/v2/tenants/t", "", nil); got.code != 418 {
		t.Errorf("GET /api/v2/... = %d, want the Chroma API's answer", got.code)
	}
	got := send(t, srv, "GET", "/metrics", "", map[string]string{"Authorization": "Bearer s3cret"})
	for _, want := range []string{`api="console",code="200",route="/"}`, `api="console",code="200",route="/console/"}`} {
		if !strings.Contains(got.body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
