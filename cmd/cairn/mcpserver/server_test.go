package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/mcpserver"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect starts a server with every tool over in-memory transports and
// returns a client session. open is the server's Open.
func connect(t *testing.T, open func(context.Context) (*engine.Engine, error)) (*mcp.ClientSession, *mcpserver.Server) {
	t.Helper()
	return connectWith(t, mcpserver.Options{Open: open, Version: "test", Tools: []string{mcpserver.ToolsAll}})
}

func connectWith(t *testing.T, opts mcpserver.Options) (*mcp.ClientSession, *mcpserver.Server) {
	t.Helper()
	ctx := context.Background()
	srv, err := mcpserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return cs, srv
}

func openDir(dir string) func(context.Context) (*engine.Engine, error) {
	return func(ctx context.Context) (*engine.Engine, error) {
		return sqlite.OpenEngine(ctx, dir, engine.Options{}, sqlite.Options{})
	}
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	var out map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &out)
	}
	return res, out
}

// callOK calls a tool that must succeed and returns its structured result.
func callOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res, out := call(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s %v: %s", name, args, errText(res))
	}
	return out
}

func errText(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// TestHandshakeDoesNotWaitForTheStore holds the store's Open until the
// client has finished initializing: the handshake must not depend on it (a
// large embedding model can take seconds to load). Tool calls then wait for
// the store and succeed.
func TestHandshakeDoesNotWaitForTheStore(t *testing.T) {
	dir := t.TempDir()
	release := make(chan struct{})
	opened := make(chan struct{})
	cs, _ := connect(t, func(ctx context.Context) (*engine.Engine, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		defer close(opened)
		return sqlite.OpenEngine(ctx, dir, engine.Options{}, sqlite.Options{})
	})
	// connect returned: initialize was answered while Open was still held.
	select {
	case <-opened:
		t.Fatal("store opened before it was released")
	default:
	}
	if got := cs.InitializeResult().ServerInfo.Name; got != "cairn" {
		t.Errorf("server name = %q", got)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) < 7 {
		t.Errorf("listed %d tools before the store opened, want all of them", len(tools.Tools))
	}
	close(release)
	res, out := call(t, cs, "write_note", map[string]any{"agent": "a1", "content": "first note"})
	if res.IsError {
		t.Fatalf("write_note: %s", errText(res))
	}
	if out["created"] != true {
		t.Errorf("write_note = %v", out)
	}
}

func TestToolsRoundTrip(t *testing.T) {
	cs, _ := connect(t, openDir(t.TempDir()))
	long := "Retry the flaky upload with exponential backoff.\n" + strings.Repeat("detail ", 500)
	res, stored := call(t, cs, "store_message", map[string]any{
		"channel": "project:p1:patterns", "sender": "builder", "project": "p1",
		"content": long, "type": "pattern", "confidence": 0.8,
		"metadata":    map[string]any{"lang": "go"},
		"breadcrumbs": map[string]any{"files": []string{"upload.go"}, "prs": []string{"#7"}},
	})
	if res.IsError {
		t.Fatalf("store_message: %s", errText(res))
	}
	id := stored["id"]

	res, out := call(t, cs, "search_messages", map[string]any{"query": "flaky upload backoff"})
	if res.IsError {
		t.Fatalf("search: %s", errText(res))
	}
	hits := out["results"].([]any)
	if len(hits) != 1 {
		t.Fatalf("search hits = %v", hits)
	}
	h := hits[0].(map[string]any)
	if h["id"] != id || h["content"] != nil {
		t.Errorf("compact hit = %v", h)
	}
	if fl := h["first_line"].(string); len(fl) > 300 || !strings.HasPrefix(fl, "Retry the flaky upload") {
		t.Errorf("first_line = %q", fl)
	}
	if b, _ := json.Marshal(out); len(b) > 2000 {
		t.Errorf("compact search result is %d bytes for one hit; it must not flood the context", len(b))
	}

	res, msg := call(t, cs, "get_message", map[string]any{"id": id})
	if res.IsError {
		t.Fatalf("get_message: %s", errText(res))
	}
	if msg["content"] != long {
		t.Errorf("get_message content differs")
	}
	md := msg["metadata"].(map[string]any)
	if md["lang"] != "go" {
		t.Errorf("metadata = %v", md)
	}

	// Filters apply: another sender's message is not found when excluded.
	call(t, cs, "store_message", map[string]any{"channel": "project:p1:patterns", "sender": "other", "content": "upload backoff too"})
	_, out = call(t, cs, "search_messages", map[string]any{"query": "upload backoff", "exclude_sender": "other"})
	for _, h := range out["results"].([]any) {
		if h.(map[string]any)["sender"] == "other" {
			t.Errorf("excluded sender in results: %v", h)
		}
	}
}

func TestBadArgumentsAreToolErrors(t *testing.T) {
	dir := t.TempDir()
	cs, _ := connect(t, openDir(dir))
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"store_message", map[string]any{"channel": "project:p:decisions", "sender": "a", "content": "x", "confidence": 1.5}, "confidence"},
		{"store_message", map[string]any{"channel": "no such channel!", "sender": "a", "content": "x"}, "channel"},
		{"store_message", map[string]any{"channel": "project:p:decisions", "sender": "", "content": "x"}, "sender"},
		{"write_note", map[string]any{"agent": "a", "content": ""}, "content"},
		{"write_note", map[string]any{"agent": "a"}, "content"},
		{"get_message", map[string]any{"id": 12345}, "not found"},
		{"get_message", map[string]any{"id": 1.5}, "id"},
		{"search_messages", map[string]any{"query": "x", "limit": 1001}, "limit"},
		{"search_messages", map[string]any{"max_age_hours": -1}, "max_age_hours"},
		{"get_channel_messages", map[string]any{"channel": "nope"}, "not found"},
	}
	for _, c := range cases {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Errorf("%s %v: protocol error %v, want a tool error", c.tool, c.args, err)
			continue
		}
		if !res.IsError {
			t.Errorf("%s %v: succeeded, want a tool error naming %q", c.tool, c.args, c.want)
			continue
		}
		if !strings.Contains(errText(res), c.want) {
			t.Errorf("%s %v: error %q does not name %q", c.tool, c.args, errText(res), c.want)
		}
	}
	// Nothing was written by any of them.
	_, out := call(t, cs, "list_channels", map[string]any{})
	for _, ch := range out["channels"].([]any) {
		if n := ch.(map[string]any)["message_count"].(float64); n != 0 {
			t.Errorf("channel %v has %v messages after only bad writes", ch.(map[string]any)["id"], n)
		}
	}
}

func TestOpenFailureIsAToolError(t *testing.T) {
	cs, _ := connect(t, func(ctx context.Context) (*engine.Engine, error) {
		return nil, &engine.InvalidError{Field: "data dir", Rule: "must be writable"}
	})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_channels", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("protocol error: %v", err)
	}
	if !res.IsError || !strings.Contains(errText(res), "could not be opened") {
		t.Errorf("result = %v %q", res.IsError, errText(res))
	}
}

// TestOpenIsRetriedAfterAFailure: a store that could not be opened (here
// a file stands where the data dir should be) is opened again at the next
// tool call, so the server recovers once the cause is gone without a
// restart of the agent's MCP process.
func TestOpenIsRetriedAfterAFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(dir, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	var attempts atomic.Int32
	cs, _ := connect(t, func(ctx context.Context) (*engine.Engine, error) {
		attempts.Add(1)
		return sqlite.OpenEngine(ctx, dir, engine.Options{}, sqlite.Options{})
	})
	res, _ := call(t, cs, "list_channels", map[string]any{})
	if !res.IsError || !strings.Contains(errText(res), "could not be opened") {
		t.Fatalf("with a file at the data dir: result = %v %q", res.IsError, errText(res))
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	res, _ = call(t, cs, "store_message", map[string]any{"channel": "project:x:decisions", "content": "retry worked", "sender": "agent"})
	if res.IsError {
		t.Fatalf("after the cause is gone: %q", errText(res))
	}
	res, out := call(t, cs, "list_channels", map[string]any{})
	if res.IsError {
		t.Fatalf("list_channels after the retry: %q", errText(res))
	}
	stored := false
	for _, ch := range out["channels"].([]any) {
		c := ch.(map[string]any)
		stored = stored || c["id"] == "project:x:decisions" && c["message_count"].(float64) == 1
	}
	if !stored {
		t.Errorf("the message written after the retry is not counted: %v", out)
	}
	if n := attempts.Load(); n != 2 {
		t.Errorf("Open called %d times, want 2 (one failure, then one success kept)", n)
	}
}

func TestDeleteIsGuarded(t *testing.T) {
	cs, _ := connect(t, openDir(t.TempDir()))
	_, stored := call(t, cs, "write_note", map[string]any{"agent": "a1", "content": "the staging password is in the vault"})
	id := stored["id"].(float64)

	for _, confirm := range []string{"", "yes", "delete message 999", "DELETE MESSAGE 1 "} {
		res, _ := call(t, cs, "memory_delete", map[string]any{"id": id, "confirm": confirm})
		if !res.IsError || !strings.Contains(errText(res), "confirm") {
			t.Errorf("confirm %q: want a tool error naming confirm, got %v %q", confirm, res.IsError, errText(res))
		}
	}
	if res, _ := call(t, cs, "get_message", map[string]any{"id": id}); res.IsError {
		t.Fatalf("message gone after refused deletes: %s", errText(res))
	}
	res, out := call(t, cs, "memory_delete", map[string]any{"id": id, "confirm": "delete message 1"})
	if res.IsError || out["deleted"] != id {
		t.Fatalf("delete: %v %q", out, errText(res))
	}
	if res, _ := call(t, cs, "get_message", map[string]any{"id": id}); !res.IsError || !strings.Contains(errText(res), "not found") {
		t.Errorf("deleted message still readable: %q", errText(res))
	}
	if res, _ := call(t, cs, "search_messages", map[string]any{"query": "staging password", "mode": "keyword"}); res.IsError {
		t.Fatalf("search: %s", errText(res))
	} else if out := res.StructuredContent.(map[string]any); len(out["results"].([]any)) != 0 {
		t.Errorf("deleted message still found: %v", out)
	}
	res, _ = call(t, cs, "memory_delete", map[string]any{"id": id, "confirm": "delete message 1"})
	if !res.IsError || !strings.Contains(errText(res), "not found") {
		t.Errorf("second delete: %q", errText(res))
	}
	res, st := call(t, cs, "memory_stats", map[string]any{})
	if res.IsError {
		t.Fatalf("stats: %s", errText(res))
	}
	if st["messages"] != 0.0 {
		t.Errorf("stats after delete = %v", st)
	}
}

func TestSearchFiltersAndProfiles(t *testing.T) {
	cs, _ := connect(t, openDir(t.TempDir()))
	call(t, cs, "store_message", map[string]any{"channel": "project:p:decisions", "sender": "a", "project": "p", "content": "cache invalidation uses versioned keys", "type": "decision", "confidence": 0.9, "breadcrumbs": map[string]any{"files": []string{"cache.go"}}})
	call(t, cs, "write_note", map[string]any{"agent": "b", "content": "cache invalidation bit me again today", "confidence": 0.2})

	for _, c := range []struct {
		args map[string]any
		want int
	}{
		{map[string]any{"query": "cache invalidation"}, 2},
		{map[string]any{"query": "cache invalidation", "types": []string{"decision"}}, 1},
		{map[string]any{"query": "cache invalidation", "channel_types": []string{"agent-notes"}}, 1},
		{map[string]any{"query": "cache invalidation", "min_confidence": 0.5}, 1},
		{map[string]any{"query": "cache invalidation", "has_breadcrumbs": true}, 1},
		{map[string]any{"query": "cache invalidation", "profile": "quality"}, 2},
		{map[string]any{"query": "cache invalidation", "weights": map[string]any{"similarity": 1, "recency": 0, "confidence": 1}}, 2},
		{map[string]any{"channels": []string{"project:p:decisions"}}, 1},
	} {
		res, out := call(t, cs, "search_messages", c.args)
		if res.IsError {
			t.Errorf("%v: %s", c.args, errText(res))
			continue
		}
		if got := len(out["results"].([]any)); got != c.want {
			t.Errorf("%v: %d results, want %d", c.args, got, c.want)
		}
	}
	for _, bad := range []map[string]any{
		{"query": "x", "mode": "telepathy"},
		{"query": "x", "profile": "nope"},
		{"query": "x", "where": map[string]any{"confidence": map[string]any{"$gt": "high"}}},
	} {
		if res, _ := call(t, cs, "search_messages", bad); !res.IsError {
			t.Errorf("%v: want a tool error", bad)
		}
	}
}
