package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"
)

// TestServeEngineVectorsAreReadOnly: through a real `cairn serve`, a Chroma
// client can read the engine's message vectors (database "cairn") but every
// change to them is refused with 403 naming the reason, a reset keeps them,
// and semantic search still finds the messages afterwards.
func TestServeEngineVectorsAreReadOnly(t *testing.T) {
	bin := buildCairn(t)
	data := t.TempDir()
	// A note embeds itself (built-in model) before the command returns.
	if out, err := exec.Command(bin, "note", "--data-dir", data, "--agent", "bob", "the cat sat on the mat").CombinedOutput(); err != nil {
		t.Fatalf("note: %v\n%s", err, out)
	}
	p := startServe(t, bin, data, "--allow-reset")
	const db = "/api/v2/tenants/default_tenant/databases/cairn"

	// Readable: the message collection is listed, counted and read.
	code, body := httpDo(t, "GET", p.url+db+"/collections", "", "")
	var colls []struct{ ID, Name string }
	if err := json.Unmarshal([]byte(body), &colls); code != 200 || err != nil || len(colls) != 1 || !strings.HasPrefix(colls[0].Name, "messages-") {
		t.Fatalf("list the engine's collections = %d %s (%v)", code, body, err)
	}
	coll := db + "/collections/" + colls[0].ID
	if code, body := httpDo(t, "GET", p.url+coll+"/count", "", ""); code != 200 || body != "1" {
		t.Fatalf("count = %d %s", code, body)
	}
	code, body = httpDo(t, "POST", p.url+coll+"/get", "", `{"include":["metadatas"]}`)
	var got struct{ IDs []string }
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil || len(got.IDs) != 1 {
		t.Fatalf("get = %d %s", code, body)
	}
	id := got.IDs[0]

	const reason = "is read-only: it holds cairn's message vectors"
	refused := []struct{ name, method, path, body string }{
		{"delete records", "POST", coll + "/delete", `{"ids":["` + id + `"]}`},
		{"delete by where", "POST", coll + "/delete", `{"where":{"agent_name":"bob"}}`},
		{"update", "POST", coll + "/update", `{"ids":["` + id + `"],"metadatas":[{"agent_name":"eve"}]}`},
		{"add", "POST", coll + "/add", `{"ids":["x"],"embeddings":[[1,2,3]]}`},
		{"upsert", "POST", coll + "/upsert", `{"ids":["` + id + `"],"embeddings":[[1,2,3]]}`},
		{"modify", "PUT", coll, `{"new_name":"renamed"}`},
		{"delete collection", "DELETE", db + "/collections/" + colls[0].Name, ""},
		{"create collection", "POST", db + "/collections", `{"name":"mine"}`},
		{"get or create", "POST", db + "/collections", `{"name":"` + colls[0].Name + `","get_or_create":true}`},
		{"delete database", "DELETE", db, ""},
	}
	for _, r := range refused {
		code, body := httpDo(t, r.method, p.url+r.path, "", r.body)
		var e struct{ Error, Message string }
		if err := json.Unmarshal([]byte(body), &e); code != http.StatusForbidden || err != nil || e.Error != "ChromaError" || !strings.Contains(e.Message, "[cairn] "+reason) {
			t.Errorf("%s = %d %s, want 403 ChromaError naming the reason", r.name, code, body)
		}
	}

	// A reset deletes the client's own collections and keeps these.
	const own = "/api/v2/tenants/default_tenant/databases/default_database/collections"
	if code, body := httpDo(t, "POST", p.url+own, "", `{"name":"docs"}`); code != 200 {
		t.Fatalf("create in default_database = %d %s", code, body)
	}
	if code, body := httpDo(t, "POST", p.url+"/api/v2/reset", "", ""); code != 200 {
		t.Fatalf("reset = %d %s", code, body)
	}
	if code, body := httpDo(t, "GET", p.url+own, "", ""); code != 200 || body != "[]" {
		t.Errorf("default_database after the reset = %d %s", code, body)
	}

	// Nothing of the engine's changed: the record and its metadata are
	// there, and semantic search finds the message by meaning.
	if code, body := httpDo(t, "POST", p.url+coll+"/get", "", `{"include":["metadatas"]}`); code != 200 || !strings.Contains(body, `"agent_name":"bob"`) {
		t.Errorf("get after the refusals = %d %s", code, body)
	}
	code, body = httpDo(t, "POST", p.url+"/api/cairn/v1/search", "", `{"query":"a kitten resting on a rug","mode":"semantic","limit":1}`)
	if code != 200 || !strings.Contains(body, "the cat sat on the mat") {
		t.Errorf("semantic search after the refusals = %d %s", code, body)
	}

	// Other databases are the client's own: create, delete.
	if code, body := httpDo(t, "POST", p.url+own, "", `{"name":"docs"}`); code != 200 {
		t.Fatalf("create in default_database = %d %s", code, body)
	}
	if code, body := httpDo(t, "DELETE", p.url+own+"/docs", "", ""); code != 200 {
		t.Errorf("delete in default_database = %d %s", code, body)
	}
}
