package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairn-dev/cairn/cmd/cairn/cairnapi"
	"github.com/cairn-dev/cairn/cmd/cairn/mcpserver"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/claudecode/ccfixture"
	"github.com/cairn-dev/cairn/engine/postgres"
	"github.com/cairn-dev/cairn/internal/pgtest"
)

// The operations beyond messages and search work from the CLI on a
// PostgreSQL store: channels with descriptions, imports of messages and
// Claude Code sessions, stats, check, exports, unread cursors, gc and
// purge; a backup is refused with what to do instead.
func TestOperationsOnPostgresCLI(t *testing.T) {
	dsn := pgtest.Database(t)
	data := t.TempDir()
	env := envMap(map[string]string{"CAIRN_DATA_DIR": data, "CAIRN_MODEL": "none", "CAIRN_STORE": dsn})
	cli := func(want int, args ...string) string {
		t.Helper()
		out, errOut, code := runCLI(t, env, "", args...)
		if code != want {
			t.Fatalf("cairn %s: exit %d (want %d)\n%s%s", strings.Join(args, " "), code, want, out, errOut)
		}
		return out + errOut
	}
	cli(0, "channels", "create", "plans", "--name", "Plans", "--description", "what comes next", "--project", "cairn")
	if out := cli(2, "channels", "create", "plans"); !strings.Contains(out, "exists") {
		t.Fatalf("second create: %s", out)
	}
	lines := `{"kind": "channel", "id": "design", "description": "how it is built"}
{"channel": "design", "sender": "alice", "content": "operations are optional capabilities of a backend"}
{"channel": "plans", "sender": "bob", "content": "next: sessions on PostgreSQL"}
{"channel": "general", "sender": "bob", "content": "the build cache is invalidated when go.mod changes", "created_at": "2020-01-01T00:00:00Z"}
`
	file := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := cli(0, "import", "messages", file, "--json"); !strings.Contains(out, `"imported":3`) {
		t.Fatalf("import: %s", out)
	}
	var st struct {
		Messages  int64                 `json:"messages"`
		ByChannel map[string]int64      `json:"by_channel"`
		Bytes     struct{ Total int64 } `json:"bytes"`
	}
	if err := json.Unmarshal([]byte(cli(0, "stats", "--json")), &st); err != nil || st.Messages != 3 || st.ByChannel["design"] != 1 || st.Bytes.Total <= 0 {
		t.Fatalf("stats %+v (%v)", st, err)
	}
	if out := cli(0, "check"); !strings.Contains(out, "messages      3") || !strings.HasSuffix(strings.TrimSpace(out), "ok") {
		t.Fatalf("check: %s", out)
	}
	exp := t.TempDir()
	cli(0, "export", "--all", "--out", exp)
	got, err := os.ReadFile(filepath.Join(exp, "messages", "design.jsonl"))
	if err != nil || !strings.Contains(string(got), `"description":"how it is built"`) || !strings.Contains(string(got), "optional capabilities") {
		t.Fatalf("export: %s (%v)", got, err)
	}
	if out := cli(0, "unread", "--agent", "carol", "--mark", "--json"); !strings.Contains(out, `"unread":3`) {
		t.Fatalf("unread: %s", out)
	}
	if out := cli(0, "unread", "--agent", "carol", "--json"); !strings.Contains(out, `"unread":0`) {
		t.Fatalf("unread after mark: %s", out)
	}
	if err := os.WriteFile(filepath.Join(data, "config.toml"), []byte("[[retention.policy]]\nname = \"old\"\nmax_age = \"365d\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := cli(0, "gc", "--json"); !strings.Contains(out, "older than max_age") {
		t.Fatalf("gc: %s", out)
	}
	if out := cli(0, "purge", "--channel", "plans", "--yes", "--json"); !strings.Contains(out, `"messages":1`) {
		t.Fatalf("purge: %s", out)
	}
	cli(0, "check")
	if out := cli(2, "backup", filepath.Join(t.TempDir(), "b.tar")); !strings.Contains(out, "pg_dump") {
		t.Fatalf("backup: %s", out)
	}
	tree, err := ccfixture.Write(t.TempDir(), ccfixture.Options{Rand: rand.New(rand.NewPCG(5, 6)), Projects: 1, SessionsPerProject: 2, Turns: 3, Sidechain: true})
	if err != nil {
		t.Fatal(err)
	}
	if out := cli(0, "import", "claude-code", tree.Root, "--json"); !strings.Contains(out, `"files_failed":0`) || strings.Contains(out, `"added":0,"known":0,"skipped"`) {
		t.Fatalf("claude-code import: %s", out)
	}
	if out := cli(0, "sessions", "--json"); !strings.Contains(out, tree.Sessions[0].ID) || !strings.Contains(out, tree.Sessions[1].ID) {
		t.Fatalf("sessions: %s", out)
	}
	if out := cli(0, "sessions", tree.Sessions[0].ID); !strings.Contains(out, "user") {
		t.Fatalf("sessions ID: %s", out)
	}
	cli(0, "purge", "--session", tree.Sessions[0].ID, "--yes")
	cli(0, "check")
	// The purged session's transcript path is no longer kept; the other's is.
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// The first session's files are its own and an old-style sub-agent
	// file (agent-{agentId}.jsonl), linked to it only by its records.
	for i, want := range []int{0, 1} {
		for _, p := range tree.Sessions[i].Paths {
			var n int
			if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM session_files WHERE path = $1`, p).Scan(&n); err != nil || n != want {
				t.Errorf("session_files rows for %s of session %d after purging the first session: %d (%v), want %d", filepath.Base(p), i, n, err, want)
			}
		}
	}
	if len(tree.Sessions[0].Paths) != 2 {
		t.Errorf("fixture: the first session has no sub-agent file: %v", tree.Sessions[0].Paths)
	}
}

// Over MCP and the cairn HTTP API, a PostgreSQL store serves stats,
// unread cursors and the unread_by filter, channel descriptions and gc.
func TestOperationsOnPostgresMCPAndHTTP(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	open := func(ctx context.Context) (*engine.Engine, error) {
		return openPostgres(ctx, dsn, "", postgres.Options{}, engine.Options{})
	}
	srv, err := mcpserver.New(mcpserver.Options{Open: open, Version: "test", Tools: []string{mcpserver.ToolsAll}})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cs.Close()
		ss.Wait()
		srv.Close()
	}()
	call := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		var out map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
		return out
	}
	for _, n := range []struct{ agent, content string }{{"bob", "bob's first"}, {"ann", "ann's own"}, {"bob", "bob's second"}} {
		call("write_note", map[string]any{"agent": n.agent, "project": "p1", "content": n.content})
	}
	if out := call("get_unread", map[string]any{"agent": "ann", "project": "p1", "limit": 1}); out["unread"] != 2.0 || out["last_id"] != 1.0 {
		t.Fatalf("get_unread: %v", out)
	}
	call("mark_read", map[string]any{"agent": "ann", "up_to": 1})
	if hs, _ := call("search_messages", map[string]any{"unread_by": "ann"})["results"].([]any); len(hs) != 1 || hs[0].(map[string]any)["id"] != 3.0 {
		t.Fatalf("search unread_by: %v", hs)
	}
	if out := call("memory_stats", nil); out["messages"] != 3.0 {
		t.Fatalf("memory_stats: %v", out)
	}

	eng, err := open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	h, err := newServeHandler(eng, serveConfig{maxBody: 1 << 20, maxBatch: 100, maxResults: 100, maxDepth: 8}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(h)
	defer web.Close()
	do := func(method, path, body string, want int) string {
		t.Helper()
		req, _ := http.NewRequest(method, web.URL+cairnapi.Prefix+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, raw, want)
		}
		return string(raw)
	}
	do("POST", "/channels", `{"id": "plans", "description": "what comes next"}`, http.StatusCreated)
	do("POST", "/channels", `{"id": "plans"}`, http.StatusConflict)
	if out := do("GET", "/channels", "", http.StatusOK); !strings.Contains(out, `"description":"what comes next"`) {
		t.Fatalf("channels: %s", out)
	}
	if out := do("GET", "/stats", "", http.StatusOK); !strings.Contains(out, `"messages":3`) {
		t.Fatalf("stats: %s", out)
	}
	if out := do("GET", "/agents/ann/unread", "", http.StatusOK); !strings.Contains(out, `"unread":1`) {
		t.Fatalf("unread: %s", out)
	}
	if out := do("POST", "/gc", `{"dry_run": true}`, http.StatusOK); !strings.Contains(out, `"dry_run":true`) {
		t.Fatalf("gc: %s", out)
	}
}
