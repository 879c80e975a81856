package cairnapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"

	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/cairnapi"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

type server struct {
	t   *testing.T
	url string
	eng *engine.Engine
}

func newServer(t *testing.T) *server {
	t.Helper()
	eng, err := sqlite.OpenEngine(context.Background(), t.TempDir(), engine.Options{}, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := cairnapi.New(cairnapi.Options{Engine: eng, MaxBodyBytes: 1 << 20, MaxLimit: 500, MaxDepth: 16})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h) // a real listener on 127.0.0.1
	t.Cleanup(func() {
		ts.Close()
		if err := eng.Close(); err != nil {
			t.Error(err)
		}
	})
	return &server{t: t, url: ts.URL + cairnapi.Prefix, eng: eng}
}

// do sends a request and decodes the JSON answer.
func (s *server) do(method, path, body string) (int, map[string]any) {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		s.t.Fatalf("%s %s: Content-Type %q, body %s", method, path, ct, raw)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		s.t.Fatalf("%s %s: answer is not a JSON object: %s", method, path, raw)
	}
	return resp.StatusCode, out
}

func (s *server) messageCount() int64 {
	st, err := ops.StoreStats(context.Background(), s.eng)
	if err != nil {
		s.t.Fatal(err)
	}
	return st.Messages
}

func TestRoundTrip(t *testing.T) {
	s := newServer(t)
	code, w := s.do("POST", "/messages", `{"channel":"project:web:decisions","sender":"planner","project":"web","content":"Render lists with keyed rows; @reviewer agreed.","confidence":0.9,"type":"decision","metadata":{"ticket":12},"breadcrumbs":{"files":["list.tsx"]}}`)
	if code != http.StatusCreated || w["created"] != true {
		t.Fatalf("store = %d %v", code, w)
	}
	id := w["id"].(float64)
	code, again := s.do("POST", "/messages", `{"channel":"project:web:decisions","sender":"planner","project":"web","content":"Render lists with keyed rows; @reviewer agreed.","confidence":0.9,"type":"decision"}`)
	if code != http.StatusOK || again["created"] != false || again["id"] != id {
		t.Errorf("same content again = %d %v, want 200 with the existing id", code, again)
	}
	code, n := s.do("POST", "/notes", `{"agent":"planner","project":"web","content":"keyed rows fixed the flicker","confidence":0.6}`)
	if code != http.StatusCreated || n["channel_id"] != "agent-notes:planner:web" {
		t.Errorf("note = %d %v", code, n)
	}

	code, m := s.do("GET", "/messages/1", "")
	if code != 200 || m["content"] != "Render lists with keyed rows; @reviewer agreed." || !slices.Equal(toStrings(m["mentions"]), []string{"reviewer"}) {
		t.Errorf("get = %d %v", code, m)
	}

	code, res := s.do("POST", "/search", `{"query":"keyed rows","mode":"keyword","types":["decision"]}`)
	if code != 200 {
		t.Fatalf("search = %d %v", code, res)
	}
	hits := res["results"].([]any)
	if len(hits) != 1 || hits[0].(map[string]any)["message"].(map[string]any)["id"] != id {
		t.Errorf("search hits = %v", hits)
	}
	if _, ok := hits[0].(map[string]any)["scores"].(map[string]any)["final"]; !ok {
		t.Errorf("hit lacks the score breakdown: %v", hits[0])
	}

	code, res = s.do("GET", "/agents/planner/notes?project=web", "")
	if code != 200 || len(res["results"].([]any)) != 1 {
		t.Errorf("notes = %d %v", code, res)
	}
	code, res = s.do("GET", "/channels/"+url.PathEscape("project:web:decisions")+"/messages?limit=5", "")
	if code != 200 || len(res["results"].([]any)) != 1 {
		t.Errorf("channel messages = %d %v", code, res)
	}
	code, res = s.do("GET", "/channels?scope=project&project=web", "")
	if code != 200 || len(res["results"].([]any)) != 3 {
		t.Errorf("project channels = %d %v", code, res)
	}
	code, res = s.do("POST", "/channels", `{"id":"ops","description":"on-call"}`)
	if code != http.StatusCreated || res["id"] != "ops" {
		t.Errorf("create channel = %d %v", code, res)
	}
	if code, res = s.do("POST", "/channels", `{"id":"ops"}`); code != http.StatusConflict || res["error"] != "already_exists" {
		t.Errorf("create again = %d %v", code, res)
	}
	code, res = s.do("GET", "/agents", "")
	if code != 200 || len(res["results"].([]any)) != 1 {
		t.Errorf("agents = %d %v", code, res)
	}
	code, res = s.do("GET", "/stats", "")
	if code != 200 || res["messages"] != 2.0 {
		t.Errorf("stats = %d %v", code, res)
	}
	code, res = s.do("DELETE", "/messages/1", "")
	if code != 200 || res["deleted"] != 1.0 {
		t.Errorf("delete = %d %v", code, res)
	}
	if code, _ = s.do("GET", "/messages/1", ""); code != 404 {
		t.Errorf("get after delete = %d", code)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestBadInput: every bad request gets a 4xx JSON body naming the problem,
// and nothing is written.
func TestBadInput(t *testing.T) {
	s := newServer(t)
	deep := strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40)
	cases := []struct {
		method, path, body string
		code               int
		field, class       string
	}{
		{"POST", "/messages", `{"channel":"project:p:decisions","sender":"a","content":""}`, 400, "content", "invalid_argument"},
		{"POST", "/messages", `{"channel":"project:p:decisions","sender":"a","content":"x","confidence":1.5}`, 400, "confidence", "invalid_argument"},
		{"POST", "/messages", `{"channel":"project:p:decisions","sender":"a","content":"x","confidence":NaN}`, 400, "body", "invalid_argument"},
		{"POST", "/messages", `{"channel":"project:p:decisions","sender":"a","content":"x","confidence":1e999}`, 400, "confidence", "invalid_argument"},
		{"POST", "/messages", `{"channel":"project:p:decisions","sender":"a","content":"x","confidence":"high"}`, 400, "confidence", "invalid_argument"},
		{"POST", "/messages", `{"channel":"project:p:decisions","sender":"a","content":"x","metadata":[1,2]}`, 400, "metadata", "invalid_argument"},
		{"POST", "/messages", `{"channel":"project:p:decisions","sender":"a","content":"x","metadata":` + deep + `}`, 400, "body", "invalid_argument"},
		{"POST", "/messages", `{"channel":"project:p:decisions","sender":"a b","content":"x"}`, 400, "sender", "invalid_argument"},
		{"POST", "/messages", `{"channel":"project:nope:","sender":"a","content":"x"}`, 400, "channel", "invalid_argument"},
		{"POST", "/messages", `{"chanel":"project:p:decisions","sender":"a","content":"x"}`, 400, "chanel", "invalid_argument"},
		{"POST", "/messages", `{"channel":"project:p:decisions","sender":"a","content":"x"} {}`, 400, "body", "invalid_argument"},
		{"POST", "/messages", `{"channel":"project:p:decisions","sender":"a","content":"x"`, 400, "body", "invalid_argument"},
		{"POST", "/messages", "{\"channel\":\"project:p:decisions\",\"sender\":\"a\",\"content\":\"\xff\xfe\"}", 400, "body", "invalid_argument"},
		{"POST", "/messages", `[]`, 400, "body", "invalid_argument"},
		{"POST", "/notes", `{"agent":"a","content":"x","confidence":-0.1}`, 400, "confidence", "invalid_argument"},
		{"POST", "/search", `{"query":"x","limit":100000}`, 400, "limit", "invalid_argument"},
		{"POST", "/search", `{"query":"x","mode":"psychic"}`, 400, "mode", "invalid_argument"},
		{"POST", "/search", `{"query":"x","max_age_hours":-1}`, 400, "max_age_hours", "invalid_argument"},
		{"POST", "/search", `{"query":"x","where":{"confidence":{"$gt":"a"}}}`, 400, "", "invalid_argument"},
		{"POST", "/search", `{"query":"x","limit":99999999999999999999}`, 400, "limit", "invalid_argument"},
		{"GET", "/messages/abc", "", 400, "id", "invalid_argument"},
		{"GET", "/messages/-4", "", 400, "id", "invalid_argument"},
		{"GET", "/messages/77", "", 404, "", "not_found"},
		{"GET", "/agents/a/notes?limit=0", "", 400, "limit", "invalid_argument"},
		{"GET", "/channels/x/messages?max_age_hours=soon", "", 400, "max_age_hours", "invalid_argument"},
		{"GET", "/nowhere", "", 404, "", "not_found"},
	}
	for _, c := range cases {
		code, body := s.do(c.method, c.path, c.body)
		if code != c.code || body["error"] != c.class || (c.field != "" && body["field"] != c.field) {
			t.Errorf("%s %s %.60s: got %d %v, want %d %s field %q", c.method, c.path, c.body, code, body, c.code, c.class, c.field)
		}
		if msg, _ := body["message"].(string); msg == "" {
			t.Errorf("%s %s: empty message", c.method, c.path)
		}
	}
	if n := s.messageCount(); n != 0 {
		t.Errorf("%d messages written by bad requests", n)
	}
}

func TestLimitsAndMediaType(t *testing.T) {
	s := newServer(t)
	big := `{"channel":"project:p:decisions","sender":"a","content":"` + strings.Repeat("x", 2<<20) + `"}`
	resp, err := http.Post(s.url+"/messages", "application/json", strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MiB body: %d, want 413", resp.StatusCode)
	}
	resp, err = http.Post(s.url+"/messages", "text/plain", strings.NewReader(`{"channel":"project:p:decisions","sender":"a","content":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: %d, want 415", resp.StatusCode)
	}
	if n := s.messageCount(); n != 0 {
		t.Errorf("%d messages written", n)
	}
}

// TestOpenAPIListsEveryRoute holds the OpenAPI document and the router
// together: every route is documented and every documented path is served.
func TestOpenAPIListsEveryRoute(t *testing.T) {
	s := newServer(t)
	resp, err := http.Get(s.url + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Errorf("openapi = %q", doc.OpenAPI)
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	routes := cairnapi.Routes()
	slices.Sort(documented)
	slices.Sort(routes)
	if !slices.Equal(documented, routes) {
		t.Errorf("OpenAPI documents\n%v\nthe router serves\n%v", documented, routes)
	}
}

// FuzzHandlers sends arbitrary bodies to every JSON route: the answer is
// always a JSON 2xx or 4xx, never a 5xx or a panic.
func FuzzHandlers(f *testing.F) {
	for _, seed := range []string{
		`{"channel":"project:p:decisions","sender":"a","content":"x"}`,
		`{"agent":"a","content":"x","confidence":0.3,"metadata":{"k":[1,2,{"z":null}]}}`,
		`{"query":"x","where":{"$and":[{"confidence":{"$gte":0.5}},{"agent_name":{"$in":["a"]}}]}}`,
		`{"query":"x","weights":{"similarity":1,"recency":1e308,"confidence":-1}}`,
		`{"confidence":1e400}`, `{"limit":-1}`, `[[[[[[]]]]]]`, `"\ud800"`, `nul`, `{"id":""}`,
	} {
		f.Add(seed)
	}
	eng, err := sqlite.OpenEngine(context.Background(), f.TempDir(), engine.Options{}, sqlite.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer eng.Close()
	h, err := cairnapi.New(cairnapi.Options{Engine: eng, MaxBodyBytes: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/messages", "/notes", "/search", "/channels"} {
			req := httptest.NewRequest("POST", cairnapi.Prefix+path, bytes.NewReader([]byte(body)))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("POST %s %q: %d %s", path, body, rec.Code, rec.Body)
			}
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("POST %s %q: answer is not JSON: %s", path, body, rec.Body)
			}
		}
	})
}
