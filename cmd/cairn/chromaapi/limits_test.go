package chromaapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/chromaapi"
	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// TestRequestLimits: every request's work and answer is bounded; a request
// over a limit gets a 400 naming it, and one at the limit works.
func TestRequestLimits(t *testing.T) {
	base, _ := cairnServer(t, chromaapi.Options{MaxRequestResults: 20, MaxIDs: 4, MaxFilterClauses: 6, MaxFilterValues: 3})
	id := createCollection(t, base, "bounded", nil)
	recs := collPath + "/" + id
	if a := call(t, base, "POST", recs+"/add", `{"ids":["a","b","c","d","e"],"embeddings":[[1,0],[0,1],[1,1],[2,1],[1,2]],"documents":["x a","x b","x c","x d","x e"]}`, nil); a.status != 201 {
		t.Fatalf("add: %d %s", a.status, a.body)
	}
	queries := func(n int) string {
		return strings.TrimSuffix(strings.Repeat("[1,0],", n), ",")
	}
	branches := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"$contains":"w%d"}`, i)
		}
		return `{"$or":[` + strings.Join(parts, ",") + `]}`
	}
	for _, tc := range []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"embeddings x n_results over", "/query", `{"query_embeddings":[` + queries(3) + `],"n_results":7}`, 400, "limit of 20 results"},
		{"embeddings x default n_results over", "/query", `{"query_embeddings":[` + queries(3) + `]}`, 400, "limit of 20 results"},
		{"embeddings x n_results at the limit", "/query", `{"query_embeddings":[` + queries(4) + `],"n_results":5}`, 200, `"ids":[[`},
		{"ids over", "/get", `{"ids":["a","b","c","d","e"]}`, 400, "limit of 4 ids"},
		{"ids in delete over", "/delete", `{"ids":["a","b","c","d","e"]}`, 400, "limit of 4 ids"},
		{"where_document branches over", "/get", `{"where_document":` + branches(6) + `}`, 400, "where_document: 7 clauses exceed this server's limit of 6"},
		{"where branches over", "/query", `{"query_embeddings":[[1,0]],"where":{"$or":[{"k":1},{"k":2},{"k":3},{"k":4},{"k":5},{"k":6}]}}`, 400, "limit of 6"},
		{"$in values over", "/get", `{"where":{"k":{"$in":[1,2,3,4]}}}`, 400, "4 $in/$nin values exceed this server's limit of 3"},
		{"where_document at the limit", "/get", `{"where_document":` + branches(5) + `}`, 200, `"ids":[]`},
		{"get limit over", "/get", `{"limit":21}`, 400, "limit of 20 records"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := call(t, base, "POST", recs+tc.path, tc.body, nil)
			if a.status != tc.status || !strings.Contains(a.body, tc.want) {
				t.Fatalf("%d %s, want %d with %q", a.status, a.body, tc.status, tc.want)
			}
		})
	}
	// A get without a limit that would answer more records than allowed.
	small, _ := cairnServer(t, chromaapi.Options{MaxRequestResults: 4})
	sid := createCollection(t, small, "small", nil)
	if a := call(t, small, "POST", collPath+"/"+sid+"/add", `{"ids":["a","b","c","d","e"],"embeddings":[[1],[2],[3],[4],[5]]}`, nil); a.status != 201 {
		t.Fatalf("add: %d %s", a.status, a.body)
	}
	if a := call(t, small, "POST", collPath+"/"+sid+"/get", `{}`, nil); a.status != 400 || !strings.Contains(a.body, "limit of 4 records") {
		t.Errorf("unbounded get: %d %s, want 400 naming the limit", a.status, a.body)
	}
	if a := call(t, small, "POST", collPath+"/"+sid+"/get", `{"limit":4,"offset":1}`, nil); a.status != 200 || !strings.Contains(a.body, `"ids":["b","c","d","e"]`) {
		t.Errorf("paged get: %d %s", a.status, a.body)
	}
}

// TestAnswerBytesBounded: an answer built from stored documents is bounded
// in bytes, not only in records: one large document asked for by many
// query embeddings, or many large documents in one get, is refused with a
// 400 naming max_answer_bytes before the answer is built; an answer within
// the limit is served.
func TestAnswerBytesBounded(t *testing.T) {
	base, _ := cairnServer(t, chromaapi.Options{MaxAnswerBytes: 10_000})
	id := createCollection(t, base, "answers", nil)
	recs := collPath + "/" + id
	doc := strings.Repeat("d", 3000)
	if a := call(t, base, "POST", recs+"/add", `{"ids":["a","b","c","d"],"embeddings":[[1,0],[0,1],[1,1],[2,1]],"documents":["`+doc+`","`+doc+`","`+doc+`","`+doc+`"]}`, nil); a.status != 201 {
		t.Fatalf("add: %d %s", a.status, a.body)
	}
	queries := func(n int) string {
		return strings.TrimSuffix(strings.Repeat("[1,0],", n), ",")
	}
	for _, tc := range []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"query: one document x 4 embeddings over", "/query", `{"query_embeddings":[` + queries(4) + `],"n_results":1}`, 400, "limit of 10000 bytes (max_answer_bytes)"},
		{"query: within", "/query", `{"query_embeddings":[` + queries(3) + `],"n_results":1}`, 200, `"ids":[["a"],["a"],["a"]]`},
		{"query: without documents", "/query", `{"query_embeddings":[` + queries(4) + `],"n_results":1,"include":["distances"]}`, 200, `"documents":null`},
		{"get: all over", "/get", `{}`, 400, "limit of 10000 bytes (max_answer_bytes)"},
		{"get: a page within", "/get", `{"limit":3}`, 200, `"ids":["a","b","c"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := call(t, base, "POST", recs+tc.path, tc.body, nil)
			if a.status != tc.status || !strings.Contains(a.body, tc.want) {
				t.Fatalf("%d %.300s, want %d with %q", a.status, a.body, tc.status, tc.want)
			}
			if a.status == 400 && !strings.Contains(a.body, `"error":"InvalidArgumentError"`) {
				t.Errorf("refusal is not Chroma's invalid-argument body: %s", a.body)
			}
		})
	}
}

// TestDocumentFilterWorkBounded: a where_document filter whose clauses
// would scan more document bytes than max_scan_bytes answers 400 naming
// the limit, on the embedded store and on PostgreSQL (where regular
// expressions are matched in Go); a smaller filter is served.
func TestDocumentFilterWorkBounded(t *testing.T) {
	opts := chromaapi.Options{MaxScanBytes: 100_000}
	servers := map[string]func() string{
		"embedded": func() string { base, _ := cairnServer(t, opts); return base },
		"postgres": func() string { return cairnPGServer(t, opts) },
	}
	for name, start := range servers {
		t.Run(name, func(t *testing.T) {
			base := start()
			id := createCollection(t, base, "scanned", nil)
			recs := collPath + "/" + id
			doc := strings.Repeat("abcdefghij", 1000)
			var ids, embs, docs []string
			for i := range 20 {
				ids = append(ids, fmt.Sprintf(`"r%d"`, i))
				embs = append(embs, fmt.Sprintf("[%d,1]", i+1))
				docs = append(docs, `"`+doc+`"`)
			}
			if a := call(t, base, "POST", recs+"/add", `{"ids":[`+strings.Join(ids, ",")+`],"embeddings":[`+strings.Join(embs, ",")+`],"documents":[`+strings.Join(docs, ",")+`]}`, nil); a.status != 201 {
				t.Fatalf("add: %d %s", a.status, a.body)
			}
			over := `{"where_document":{"$and":[{"$not_regex":"[a-j]+1"},{"$not_regex":"[a-j]+2"}]}}` // 20 x 2 x 10 KB
			for _, path := range []string{"/get", "/delete"} {
				a := call(t, base, "POST", recs+path, over, nil)
				if a.status != 400 || !strings.Contains(a.body, `"error":"InvalidArgumentError"`) || !strings.Contains(a.body, "limit of 100000 bytes") || !strings.Contains(a.body, "max_scan_bytes") {
					t.Errorf("%s over the bound: %d %s, want 400 naming max_scan_bytes", path, a.status, a.body)
				}
			}
			if a := call(t, base, "POST", recs+"/query", `{"query_embeddings":[[1,1]],`+over[1:], nil); a.status != 400 || !strings.Contains(a.body, "max_scan_bytes") {
				t.Errorf("query over the bound: %d %s, want 400 naming max_scan_bytes", a.status, a.body)
			}
			if a := call(t, base, "POST", recs+"/get", `{"ids":["r1","r2"],"where_document":{"$not_regex":"[a-j]+1"},"include":[]}`, nil); a.status != 200 || !strings.Contains(a.body, `"ids":["r1","r2"]`) {
				t.Errorf("get within the bound: %d %.200s", a.status, a.body)
			}
			if a := call(t, base, "GET", recs+"/count", "", nil); a.body != "20" {
				t.Errorf("count after the refused delete: %s, want 20", a.body)
			}
		})
	}
}

// TestNamesAndIDsBounded: names and ids a store keeps as keys are bounded
// and refused with a 400 naming the field, on both stores: a tenant or
// database name with ".." (Chroma's own rule for collection names) or
// control characters or over 512 characters, and a record id over
// chroma.MaxIDBytes (the embedded store answered 500 "key too large").
// Chroma's other tenant names (any characters) stay accepted.
func TestNamesAndIDsBounded(t *testing.T) {
	servers := map[string]func() string{
		"embedded": func() string { base, _ := cairnServer(t, chromaapi.Options{}); return base },
		"postgres": func() string { return cairnPGServer(t, chromaapi.Options{}) },
	}
	for name, start := range servers {
		t.Run(name, func(t *testing.T) {
			base := start()
			for _, tc := range []struct {
				name, method, path, body string
				status                   int
				want                     string
			}{
				{"tenant with ..", "POST", "/api/v2/tenants", `{"name":"../../t"}`, 400, "name: Expected a name that does not contains two consecutive periods"},
				{"tenant with NUL", "POST", "/api/v2/tenants", `{"name":"te\u0000nant"}`, 400, "name: "},
				{"tenant too long", "POST", "/api/v2/tenants", `{"name":"` + strings.Repeat("t", 513) + `"}`, 400, "name: "},
				{"tenant with a slash and spaces", "POST", "/api/v2/tenants", `{"name":"td a b/c"}`, 200, `{}`},
				{"database too long", "POST", "/api/v2/tenants/default_tenant/databases", `{"name":"` + strings.Repeat("d", 10_000) + `"}`, 400, "database_name: "},
				{"database with ..", "POST", "/api/v2/tenants/default_tenant/databases", `{"name":"a..b"}`, 400, "database_name: "},
				{"database under a tenant with ..", "POST", "/api/v2/tenants/..%2F..%2Ft/databases", `{"name":"dbx"}`, 400, "tenant: "},
			} {
				a := call(t, base, tc.method, tc.path, tc.body, nil)
				if a.status != tc.status || !strings.Contains(a.body, tc.want) {
					t.Errorf("%s: %d %.300s, want %d with %q", tc.name, a.status, a.body, tc.status, tc.want)
				}
			}
			id := createCollection(t, base, "ids", nil)
			long := strings.Repeat("i", chroma.MaxIDBytes+1)
			a := call(t, base, "POST", collPath+"/"+id+"/add", `{"ids":["`+long+`"],"embeddings":[[1,2]]}`, nil)
			if a.status != 400 || !strings.Contains(a.body, "ids") || !strings.Contains(a.body, fmt.Sprint(chroma.MaxIDBytes)) {
				t.Errorf("an id of %d bytes: %d %.300s, want 400 naming ids and the limit", len(long), a.status, a.body)
			}
			a = call(t, base, "POST", collPath+"/"+id+"/add", `{"ids":["`+long[1:]+`"],"embeddings":[[1,2]]}`, nil)
			if a.status != 201 {
				t.Errorf("an id of %d bytes: %d %.300s, want 201", len(long)-1, a.status, a.body)
			}
		})
	}
}

// TestNULRefused: a NUL character in a record's id, document, uri,
// metadata key or string value is refused on add, upsert and update with a
// 400 naming the field, and nothing is written.
func TestNULRefused(t *testing.T) {
	base, _ := cairnServer(t, chromaapi.Options{})
	id := createCollection(t, base, "nul", nil)
	recs := collPath + "/" + id
	if a := call(t, base, "POST", recs+"/add", `{"ids":["a"],"embeddings":[[1,0]],"documents":["clean"],"metadatas":[{"k":"v"}]}`, nil); a.status != 201 {
		t.Fatalf("add: %d %s", a.status, a.body)
	}
	for _, tc := range []struct{ name, body, field string }{
		{"id", `{"ids":["b\u0000"],"embeddings":[[0,1]]}`, "ids[0]"},
		{"document", `{"ids":["a","b"],"embeddings":[[1,0],[0,1]],"documents":["fine","x\u0000y"]}`, "documents[1]"},
		{"uri", `{"ids":["b"],"embeddings":[[0,1]],"uris":["file:///x\u0000"]}`, "uris[0]"},
		{"metadata key", `{"ids":["b"],"embeddings":[[0,1]],"metadatas":[{"k\u0000":"v"}]}`, "metadatas[0]: a key"},
		{"metadata value", `{"ids":["b"],"embeddings":[[0,1]],"metadatas":[{"k":"v\u0000"}]}`, "metadatas[0].k"},
	} {
		for _, op := range []string{"add", "upsert", "update"} {
			body := tc.body
			if op == "update" {
				body = strings.Replace(strings.Replace(body, `"b"`, `"a"`, 1), `"ids":["b\u0000"]`, `"ids":["a\u0000"]`, 1)
			}
			a := call(t, base, "POST", recs+"/"+op, body, nil)
			if a.status != 400 || !strings.Contains(a.body, `"error":"InvalidArgumentError"`) || !strings.Contains(a.body, tc.field+": must not contain a NUL character") {
				t.Errorf("%s with NUL in the %s: %d %s, want 400 naming %s", op, tc.name, a.status, a.body, tc.field)
			}
		}
	}
	a := call(t, base, "POST", recs+"/get", `{"include":["documents","metadatas","uris"]}`, nil)
	if a.status != 200 || a.body != `{"ids":["a"],"embeddings":null,"documents":["clean"],"uris":[null],"metadatas":[{"k":"v"}],"include":["documents","metadatas","uris"]}` {
		t.Errorf("after the refusals: %d %s, want the one record as written", a.status, a.body)
	}
}
