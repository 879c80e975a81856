package chromaapi_test

import (
	"context"
	"encoding/json"
	"github.com/cairn-dev/cairn/vecstore"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/chromaapi"
)

var fuzzOps = []string{"add", "upsert", "update", "delete", "get", "query", "create", "modify", "tenant", "database"}

// FuzzHandler sends arbitrary bodies to every write and read route. Whatever
// the body (malformed JSON, wrong types, huge numbers, NaN, deep nesting,
// invalid UTF-8), the answer is a clear 4xx or a success, never a 5xx other
// than Chroma's own 500 for an unknown id in a query's ids filter, never a
// panic, and a refused request writes nothing.
func FuzzHandler(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "chroma", "cases", "*.json"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var cf caseFile
		if err := json.Unmarshal(data, &cf); err != nil {
			f.Fatal(err)
		}
		for _, s := range cf.Steps {
			body := string(s.Body)
			if s.Raw != nil {
				body = *s.Raw
			}
			if s.Method != "POST" && s.Method != "PUT" || body == "" {
				continue
			}
			op := s.Path[strings.LastIndex(s.Path, "/")+1:]
			for i, o := range fuzzOps {
				if o == op || (op == "collections" && o == "create") {
					f.Add(uint8(i), body)
				}
			}
		}
	}
	f.Add(uint8(0), "{\"ids\":[\"\xff\"],\"embeddings\":[[1,2]]}")
	f.Add(uint8(5), `{"query_embeddings":[[1e999,2]]}`)
	f.Add(uint8(4), `{"where":`+strings.Repeat(`{"$and":[`, 200)+`{"a":1}`+strings.Repeat(`]}`, 200)+`}`)

	ctx := context.Background()
	coll, err := vecstore.Open(ctx, f.TempDir(), vecstore.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = coll.Close() })
	h := chromaapi.New(chromaapi.Options{Collections: coll, MaxBodyBytes: 1 << 20})
	do := func(method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	w := do("POST", collPath, `{"name":"fuzzed","get_or_create":true}`)
	var c struct{ ID string }
	if err := json.Unmarshal(w.Body.Bytes(), &c); err != nil || c.ID == "" {
		f.Fatalf("create: %s", w.Body)
	}
	do("POST", collPath+"/"+c.ID+"/add", `{"ids":["a","b"],"embeddings":[[1,2],[3,4]],"metadatas":[{"k":1},{"k":"x"}],"documents":["d1","d2"]}`)
	snapshot := func() string {
		all := do("POST", collPath+"/"+c.ID+"/get", `{"include":["embeddings","documents","metadatas","uris"]}`).Body.String()
		list := do("GET", collPath, "").Body.String()
		dbs := do("GET", "/api/v2/tenants/default_tenant/databases", "").Body.String()
		return all + list + dbs
	}

	f.Fuzz(func(t *testing.T, op uint8, body string) {
		name := fuzzOps[int(op)%len(fuzzOps)]
		method, path := "POST", collPath+"/"+c.ID+"/"+name
		switch name {
		case "create":
			path = collPath
		case "modify":
			method, path = "PUT", collPath+"/"+c.ID
		case "tenant":
			path = "/api/v2/tenants"
		case "database":
			path = "/api/v2/tenants/default_tenant/databases"
		}
		before := snapshot()
		w := do(method, path, body)
		if w.Code >= 500 && !(name == "query" && strings.Contains(w.Body.String(), "Error finding id")) {
			t.Fatalf("%s %s %q: %d %s", method, path, body, w.Code, w.Body)
		}
		if w.Code >= 400 {
			var e struct{ Error, Message string }
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error == "" || e.Message == "" {
				t.Fatalf("%s %q: error answer %d is not a Chroma error body: %q", name, body, w.Code, w.Body)
			}
			if w.Header().Get("chroma-trace-id") == "" {
				t.Fatalf("%s: error answer without chroma-trace-id", name)
			}
			if after := snapshot(); after != before {
				t.Fatalf("%s %q refused with %d but changed the store", name, body, w.Code)
			}
			return
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%s %q: answer %d is not JSON: %q", name, body, w.Code, w.Body)
		}
		if w.Code != http.StatusOK && w.Code != http.StatusCreated {
			t.Fatalf("%s: unexpected status %d", name, w.Code)
		}
	})
}
