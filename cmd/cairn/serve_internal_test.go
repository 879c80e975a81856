package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// TestServeHoldsOneVectorStore: the Chroma API of `cairn serve` writes
// into the engine's own vector store, so a collection added over HTTP is
// in that store's memory at once, without a change-log replay (a second
// Store on the same directory would have to replay it), and the handler
// keeps working from a keyword-only engine (no model, no vector set).
func TestServeHoldsOneVectorStore(t *testing.T) {
	ctx := context.Background()
	eng, st, err := sqlite.OpenEngineStore(ctx, t.TempDir(), engine.Options{}, sqlite.Options{VectorStore: sqlite.VectorStoreOptions{Open: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	vs := st.VectorStore()
	if vs == nil {
		t.Fatal("VectorStore is nil with VectorStoreOptions.Open")
	}
	cfg := serveConfig{maxBody: 1 << 20, maxBatch: 100, maxResults: 100, maxDepth: 8, vectors: st.VectorStore}
	h, err := newServeHandler(eng, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	post := func(path, body string) map[string]any {
		t.Helper()
		resp, err := http.Post(srv.URL+"/api/v2/tenants/default_tenant/databases/default_database/collections"+path,
			"application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, raw)
		}
		var v map[string]any
		_ = json.Unmarshal(raw, &v)
		return v
	}
	before := vs.Stats()
	c := post("", `{"name":"docs"}`)
	id, _ := c["id"].(string)
	post("/"+id+"/add", `{"ids":["a","b"],"embeddings":[[1,0],[0,1]],"documents":["x","y"]}`)

	after := vs.Stats()
	if after.Records != before.Records+2 {
		t.Errorf("engine's store holds %d records after the Chroma add, want %d", after.Records, before.Records+2)
	}
	n, err := vs.Count(ctx, id)
	if err != nil || n != 2 {
		t.Fatalf("engine's store counts %d (%v), want 2", n, err)
	}
	if got := vs.Stats().Syncs; got != before.Syncs {
		t.Errorf("the engine's store replayed %d change-log entries: the Chroma API wrote through another Store", got-before.Syncs)
	}
}
