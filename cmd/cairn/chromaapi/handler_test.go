package chromaapi_test

import (
	"encoding/json"
	"github.com/cairn-dev/cairn/vecstore"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/chromaapi"
)

const collPath = "/api/v2/tenants/default_tenant/databases/default_database/collections"

type answer struct {
	status int
	body   string
	header http.Header
}

func call(t testing.TB, base, method, path, body string, hdr map[string]string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
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
	return answer{status: resp.StatusCode, body: string(b), header: resp.Header}
}

// createCollection creates a collection and returns its id.
func createCollection(t testing.TB, base, name string, hdr map[string]string) string {
	t.Helper()
	a := call(t, base, "POST", collPath, `{"name":"`+name+`"}`, hdr)
	if a.status != 200 {
		t.Fatalf("create collection: %d %s", a.status, a.body)
	}
	var c struct{ ID string }
	if err := json.Unmarshal([]byte(a.body), &c); err != nil {
		t.Fatal(err)
	}
	return c.ID
}

func TestAuthToken(t *testing.T) {
	base, _ := cairnServer(t, chromaapi.Options{AuthToken: "s3cret"})
	for _, tc := range []struct {
		name   string
		path   string
		hdr    map[string]string
		status int
	}{
		{"no token", collPath, nil, 401},
		{"wrong bearer", collPath, map[string]string{"Authorization": "Bearer nope"}, 401},
		{"wrong x-chroma-token", collPath, map[string]string{"X-Chroma-Token": "nope"}, 401},
		{"bearer", collPath, map[string]string{"Authorization": "Bearer s3cret"}, 200},
		{"bearer lower-case scheme", collPath, map[string]string{"Authorization": "bearer s3cret"}, 200},
		{"x-chroma-token", collPath, map[string]string{"X-Chroma-Token": "s3cret"}, 200},
		{"basic is not a token", collPath, map[string]string{"Authorization": "Basic s3cret"}, 401},
		{"heartbeat is open", "/api/v2/heartbeat", nil, 200},
		{"version is open", "/api/v2/version", nil, 200},
		{"pre-flight needs the token", "/api/v2/pre-flight-checks", nil, 401},
		{"bearer with two spaces", collPath, map[string]string{"Authorization": "Bearer  s3cret"}, 401},
		{"both headers must agree", collPath, map[string]string{"Authorization": "Bearer s3cret", "X-Chroma-Token": "nope"}, 401},
		{"unknown route needs the token", "/api/v2/no/such/route", nil, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := call(t, base, "GET", tc.path, "", tc.hdr)
			if a.status != tc.status {
				t.Fatalf("status = %d (%s), want %d", a.status, a.body, tc.status)
			}
			if a.status == 401 {
				if a.header.Get("chroma-trace-id") == "" || !strings.Contains(a.body, `"error":"AuthError"`) {
					t.Errorf("401 answer = %s (headers %v), want an AuthError body and a trace id", a.body, a.header)
				}
			}
		})
	}
}

// TestAuthBeforeRouting: an unauthenticated caller gets 401 whatever the
// method or path, so it cannot tell which routes exist.
func TestAuthBeforeRouting(t *testing.T) {
	base, _ := cairnServer(t, chromaapi.Options{AuthToken: "s3cret"})
	for _, method := range []string{"DELETE", "PUT", "PATCH"} {
		if a := call(t, base, method, collPath, "", nil); a.status != 401 {
			t.Errorf("%s %s without a token = %d %s, want 401", method, collPath, a.status, a.body)
		}
	}
	if a := call(t, base, "DELETE", collPath, "", map[string]string{"Authorization": "Bearer s3cret"}); a.status != 405 {
		t.Errorf("DELETE %s with the token = %d, want 405", collPath, a.status)
	}
}

// TestBodyMustBeJSON: a body without a JSON Content-Type (what a browser
// sends cross-origin without a preflight) is refused, as Chroma does.
func TestBodyMustBeJSON(t *testing.T) {
	base, _ := cairnServer(t, chromaapi.Options{})
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		req, err := http.NewRequest("POST", base+collPath, strings.NewReader(`{"name":"from_a_page"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", ct)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 415 {
			t.Errorf("Content-Type %q: %d, want 415", ct, resp.StatusCode)
		}
	}
	if a := call(t, base, "POST", collPath, `{"name":"json_charset"}`, map[string]string{"Content-Type": "application/json; charset=utf-8"}); a.status != 200 {
		t.Errorf("application/json; charset=utf-8: %d %s, want 200", a.status, a.body)
	}
	if a := call(t, base, "GET", collPath, "", nil); strings.Contains(a.body, "from_a_page") {
		t.Errorf("a refused body created a collection: %s", a.body)
	}
}

func TestResetWhenAllowed(t *testing.T) {
	base, _ := cairnServer(t, chromaapi.Options{AllowReset: true})
	id := createCollection(t, base, "to_reset", nil)
	if a := call(t, base, "POST", collPath+"/"+id+"/add", `{"ids":["a"],"embeddings":[[1,2]]}`, nil); a.status != 201 {
		t.Fatalf("add: %d %s", a.status, a.body)
	}
	if a := call(t, base, "POST", "/api/v2/reset", "", nil); a.status != 200 || a.body != "true" {
		t.Fatalf("reset = %d %s, want 200 true", a.status, a.body)
	}
	if a := call(t, base, "GET", collPath+"/"+id+"/count", "", nil); a.status != 404 {
		t.Errorf("count after reset = %d %s, want 404", a.status, a.body)
	}
	if a := call(t, base, "GET", collPath[:strings.LastIndex(collPath, "/")], "", nil); a.status != 200 {
		t.Errorf("default database after reset = %d %s, want 200", a.status, a.body)
	}
	if a := call(t, base, "GET", "/api/v2/tenants/default_tenant/databases/default_database/collections_count", "", nil); a.body != "0" {
		t.Errorf("collections after reset = %s, want 0", a.body)
	}
}

func TestLimits(t *testing.T) {
	base, _ := cairnServer(t, chromaapi.Options{MaxBodyBytes: 4096, MaxBatchSize: 3, MaxNResults: 5, MaxFilterDepth: 2})
	id := createCollection(t, base, "limits", nil)
	p := collPath + "/" + id
	for _, tc := range []struct {
		name, path, body string
		status           int
		msg              string
	}{
		{"body too large", p + "/add", `{"ids":["a"],"documents":["` + strings.Repeat("x", 5000) + `"],"embeddings":[[1]]}`, 413, "exceeds the limit of 4096 bytes"},
		{"batch too large", p + "/add", `{"ids":["a","b","c","d"],"embeddings":[[1],[2],[3],[4]]}`, 400, "Batch of 4 records exceeds this server's limit of 3"},
		{"batch at the limit", p + "/add", `{"ids":["a","b","c"],"embeddings":[[1],[2],[3]]}`, 201, ""},
		{"too many query embeddings", p + "/query", `{"query_embeddings":[[1],[2],[3],[4]]}`, 400, "Batch of 4 query embeddings"},
		{"n_results too large", p + "/query", `{"query_embeddings":[[1]],"n_results":6}`, 400, "n_results 6 exceeds this server's limit of 5"},
		{"n_results at the limit", p + "/query", `{"query_embeddings":[[1]],"n_results":5}`, 200, ""},
		{"where too deep", p + "/get", `{"where":{"$and":[{"$or":[{"$and":[{"a":1},{"b":2}]},{"c":3}]},{"d":4}]}}`, 400, "nested deeper than 2 levels"},
		{"where at the limit", p + "/get", `{"where":{"$and":[{"$or":[{"a":1},{"c":3}]},{"d":4}]}}`, 200, ""},
		{"where_document too deep", p + "/get", `{"where_document":{"$and":[{"$or":[{"$and":[{"$contains":"a"}]}]}]}}`, 400, "nested deeper than 2 levels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := call(t, base, "POST", tc.path, tc.body, nil)
			if a.status != tc.status || !strings.Contains(a.body, tc.msg) {
				t.Fatalf("answer = %d %s, want %d containing %q", a.status, a.body, tc.status, tc.msg)
			}
		})
	}
	if a := call(t, base, "GET", "/api/v2/pre-flight-checks", "", nil); a.body != `{"max_batch_size":3,"supports_base64_encoding":true}` {
		t.Errorf("pre-flight = %s, want max_batch_size 3", a.body)
	}
	if a := call(t, base, "GET", p+"/count", "", nil); a.body != "3" {
		t.Errorf("count = %s, want 3 (only the batch at the limit was written)", a.body)
	}
}

func TestCollectionByCRNAndID(t *testing.T) {
	base, _ := cairnServer(t, chromaapi.Options{})
	id := createCollection(t, base, "crn_coll", nil)
	a := call(t, base, "GET", "/api/v2/collections/default_tenant:default_database:crn_coll", "", nil)
	if a.status != 200 || !strings.Contains(a.body, id) {
		t.Errorf("CRN lookup = %d %s, want the collection", a.status, a.body)
	}
	a = call(t, base, "GET", "/api/v2/collections/default_tenant:default_database:nope", "", nil)
	if a.status != 404 {
		t.Errorf("CRN lookup of a missing collection = %d %s, want 404", a.status, a.body)
	}
	a = call(t, base, "GET", collPath+"/by-id/"+id, "", nil)
	if a.status != 200 || !strings.Contains(a.body, `"name":"crn_coll"`) {
		t.Errorf("by-id = %d %s, want the collection", a.status, a.body)
	}
	a = call(t, base, "GET", "/api/v2/tenants/default_tenant/databases/other/collections/by-id/"+id, "", nil)
	if a.status != 404 {
		t.Errorf("by-id in another database = %d %s, want 404", a.status, a.body)
	}
	// A collection id given without hyphens is accepted, as Chroma does.
	a = call(t, base, "GET", collPath+"/"+strings.ReplaceAll(id, "-", "")+"/count", "", nil)
	if a.status != 200 || a.body != "0" {
		t.Errorf("count via simple-form UUID = %d %s, want 200 0", a.status, a.body)
	}
}

func TestStats(t *testing.T) {
	ctx := t.Context()
	coll, err := vecstore.Open(ctx, t.TempDir(), vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	h := chromaapi.New(chromaapi.Options{Collections: coll})
	srv := httptest.NewServer(h)
	defer srv.Close()
	call(t, srv.URL, "GET", "/api/v2/heartbeat", "", nil)
	call(t, srv.URL, "GET", "/api/v2/nope", "", nil)
	call(t, srv.URL, "GET", collPath+"/missing", "", nil)
	got := map[string]chromaapi.RouteStats{}
	for _, s := range h.Stats() {
		got[s.Route] = s
	}
	if s := got["heartbeat"]; s.Requests != 1 || s.ClientErrors != 0 {
		t.Errorf("heartbeat stats = %+v", s)
	}
	if s := got["unknown"]; s.Requests != 1 || s.ClientErrors != 1 {
		t.Errorf("unknown stats = %+v", s)
	}
	if s := got["collection"]; s.Requests != 1 || s.ClientErrors != 1 {
		t.Errorf("collection stats = %+v", s)
	}
}
