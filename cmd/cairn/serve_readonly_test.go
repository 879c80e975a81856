package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
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

// TestServeReadOnlyDataDir: `cairn serve` on a data dir it may not write
// (another user's, or chmod -w) serves every read — the cairn API, the
// Chroma API, the console — says once at start that it serves read-only,
// and refuses every write with 403 naming the directory, before anything
// is written: the data dir is unchanged after.
func TestServeReadOnlyDataDir(t *testing.T) {
	bin := buildCairn(t)
	data := t.TempDir()
	env := []string{"CAIRN_DATA_DIR=" + data, "HOME=" + os.TempDir(), "PATH=" + os.Getenv("PATH")}
	if out, err := exec.Command(bin, "note", "--data-dir", data, "--agent", "ann", "the parser is flaky on empty input").CombinedOutput(); err != nil {
		t.Fatalf("note: %v\n%s", err, out)
	}
	// A collection of the client's own, written through a writable serve.
	const own = "/api/v2/tenants/default_tenant/databases/default_database/collections"
	w := startServe(t, bin, data)
	code, body := httpDo(t, "POST", w.url+own, "", `{"name":"docs"}`)
	var coll struct{ ID string }
	if err := json.Unmarshal([]byte(body), &coll); code != 200 || err != nil {
		t.Fatalf("create collection = %d %s", code, body)
	}
	if code, body := httpDo(t, "POST", w.url+own+"/"+coll.ID+"/add", "", `{"ids":["a","b"],"embeddings":[[1,0,0],[0,1,0]],"documents":["alpha","beta"]}`); code != 201 && code != 200 {
		t.Fatalf("add = %d %s", code, body)
	}
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, w.stderr.String())
	}

	cmd := exec.Command(bin, "serve", "--port", "0", "--json")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: makeReadOnly(t, bin, data)}
	before := dirListing(t, data)
	p := startServeCmd(t, cmd)
	if n := strings.Count(p.stderr.String(), "serving read-only"); n != 1 || !strings.Contains(p.stderr.String(), data) {
		t.Errorf("serve logged %d lines saying it serves read-only, want 1 naming %s:\n%s", n, data, p.stderr.String())
	}

	const api = "/api/cairn/v1"
	for _, r := range []struct{ method, path, body, want string }{
		{"POST", api + "/search", `{"query":"parser","limit":1}`, "flaky"},
		{"POST", api + "/search", `{"query":"a tokenizer that breaks on blank input","mode":"semantic","limit":1}`, "flaky"},
		{"GET", api + "/messages/1", "", "flaky"},
		{"GET", api + "/agents/ann/notes", "", "flaky"},
		{"GET", api + "/channels", "", "agent-notes:ann"},
		{"GET", api + "/stats", "", `"messages":1`},
		{"GET", "/", "", "<html"},
		{"GET", own, "", `"docs"`},
		{"POST", own, `{"name":"docs","get_or_create":true}`, coll.ID},
		{"GET", own + "/" + coll.ID + "/count", "", "2"},
		{"POST", own + "/" + coll.ID + "/get", `{"include":["documents"]}`, "beta"},
		{"POST", own + "/" + coll.ID + "/query", `{"query_embeddings":[[0,1,0]],"n_results":1,"include":["documents"]}`, "beta"},
	} {
		if code, body := httpDo(t, r.method, p.url+r.path, "", r.body); code != 200 || !strings.Contains(body, r.want) {
			t.Errorf("%s %s on a read-only data dir = %d %.300s, want 200 with %q", r.method, r.path, code, body, r.want)
		}
	}

	for _, r := range []struct{ method, path, body, class string }{
		{"POST", api + "/notes", `{"agent":"ann","content":"a write"}`, "read_only"},
		{"POST", api + "/messages", `{"channel_id":"c","sender_id":"ann","content":"a write"}`, "read_only"},
		{"DELETE", api + "/messages/1", "", "read_only"},
		{"POST", api + "/channels", `{"id":"c2"}`, "read_only"},
		{"POST", api + "/agents/ann/read", `{"channel_id":"agent-notes:ann","message_id":1}`, "read_only"},
		{"POST", api + "/gc", `{}`, "read_only"},
		{"POST", own, `{"name":"more"}`, "ChromaError"},
		{"POST", own + "/" + coll.ID + "/add", `{"ids":["c"],"embeddings":[[0,0,1]]}`, "ChromaError"},
		{"POST", own + "/" + coll.ID + "/upsert", `{"ids":["a"],"embeddings":[[0,0,1]]}`, "ChromaError"},
		{"POST", own + "/" + coll.ID + "/update", `{"ids":["a"],"documents":["changed"]}`, "ChromaError"},
		{"POST", own + "/" + coll.ID + "/delete", `{"ids":["a"]}`, "ChromaError"},
		{"PUT", own + "/" + coll.ID, `{"new_name":"renamed"}`, "ChromaError"},
		{"DELETE", own + "/docs", "", "ChromaError"},
		{"POST", "/api/v2/tenants/default_tenant/databases", `{"name":"db2"}`, "ChromaError"},
		{"POST", "/api/v2/tenants", `{"name":"t2"}`, "ChromaError"},
	} {
		code, body := httpDo(t, r.method, p.url+r.path, "", r.body)
		var e struct{ Error, Message string }
		if err := json.Unmarshal([]byte(body), &e); code != http.StatusForbidden || err != nil || e.Error != r.class || !strings.Contains(e.Message, data) || !strings.Contains(e.Message, "read-only") {
			t.Errorf("%s %s on a read-only data dir = %d %s, want 403 %s naming %s", r.method, r.path, code, body, r.class, data)
		}
	}
	if after := dirListing(t, data); after != before {
		t.Errorf("the data dir changed:\n%s\nwas\n%s", after, before)
	}
}
