package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// jsPeers returns testdata/js with its node_modules, or skips the test when
// they are not installed (outside CI; under CI=true that is a failure:
// `make test` installs them).
func jsPeers(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("JS peers are not installed in %s (run `npm ci --prefix testdata/js`): %v", dir, err)
		}
		t.Skipf("JS peers are not installed in %s; run `npm ci --prefix testdata/js`", dir)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not on PATH: %v", err)
	}
	return dir
}

// cairnBinDir is the temporary directory cairnBinOnce built into; TestMain
// removes it after the package's tests.
var cairnBinDir string

// cairnBinOnce links the binary once for all the package's tests (a link
// of the binary with its built-in model takes seconds, more under load).
var cairnBinOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "cairn-cli-bin-")
	if err != nil {
		return "", err
	}
	cairnBinDir = dir
	bin := filepath.Join(dir, "cairn")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// buildCairn returns the cairn binary, static as shipped, built once per
// test binary. Tests run it; none may change it.
func buildCairn(t *testing.T) string {
	t.Helper()
	bin, err := cairnBinOnce()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestMCPWithOfficialTypeScriptClient drives `cairn mcp` over stdio with the
// official MCP TypeScript SDK client: initialize, list tools, store, search,
// get, and bad arguments that must come back as tool errors while the server
// keeps serving.
func TestMCPWithOfficialTypeScriptClient(t *testing.T) {
	js := jsPeers(t)
	bin := buildCairn(t)
	data := t.TempDir()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a hang guard: generous on a loaded machine
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(js, "mcp_client.mjs"), bin, data, "--tools", "all")
	cmd.Dir = js
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcp client: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}

	steps := map[string]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("bad client output line %q: %v", sc.Text(), err)
		}
		steps[m["step"].(string)] = m
	}
	step := func(name string) map[string]any {
		t.Helper()
		s, ok := steps[name]
		if !ok {
			t.Fatalf("step %q missing from client output:\n%s", name, out)
		}
		return s
	}
	structured := func(name string) map[string]any {
		t.Helper()
		s := step(name)
		if s["protocol_error"] == true || s["is_error"] == true {
			t.Fatalf("step %q failed: %v", name, s)
		}
		return s["structured"].(map[string]any)
	}

	if got := step("initialize")["server"].(map[string]any)["name"]; got != "cairn" {
		t.Errorf("server name = %v, want cairn", got)
	}
	var names []string
	for _, tl := range step("list_tools")["tools"].([]any) {
		tool := tl.(map[string]any)
		names = append(names, tool["name"].(string))
		if tool["has_description"] != true || tool["schema_type"] != "object" || tool["title"] == "" || tool["open_world"] != false {
			t.Errorf("tool %v lacks a description, an object schema, a title or openWorldHint false", tool)
		}
	}
	for _, want := range []string{"store_message", "write_note", "search_messages", "get_message", "get_notes", "get_channel_messages", "list_channels"} {
		if !contains(names, want) {
			t.Errorf("tools = %v, missing %s", names, want)
		}
	}

	stored := structured("store")
	if stored["created"] != true || stored["channel_id"] != "project:demo:decisions" {
		t.Errorf("store = %v", stored)
	}
	again := structured("store_again")
	if again["created"] != false || again["id"] != stored["id"] {
		t.Errorf("store of the same content = %v, want the existing id %v and created false", again, stored["id"])
	}

	hits := structured("search")["results"].([]any)
	if len(hits) == 0 || hits[0].(map[string]any)["id"] != stored["id"] {
		t.Fatalf("search for the stored decision found %v", hits)
	}
	first := hits[0].(map[string]any)
	if _, ok := first["content"]; ok {
		t.Errorf("compact search result carries the whole content: %v", first)
	}
	if !strings.HasPrefix(first["first_line"].(string), "We chose SQLite WAL mode") {
		t.Errorf("first_line = %q", first["first_line"])
	}
	if first["breadcrumbs"] == nil {
		t.Errorf("compact result lost its breadcrumbs: %v", first)
	}
	full := structured("search_full")["results"].([]any)
	if len(full) == 0 || !strings.Contains(full[0].(map[string]any)["content"].(string), "3x fewer lock waits") {
		t.Errorf("full search = %v, want whole content", full)
	}
	if got := structured("get")["content"]; !strings.Contains(got.(string), "readers never block") {
		t.Errorf("get content = %v", got)
	}
	if n := len(structured("notes")["results"].([]any)); n != 1 {
		t.Errorf("notes = %d, want 1", n)
	}
	if n := len(structured("channels")["channels"].([]any)); n < 2 {
		t.Errorf("channels = %d, want the project's channels and the notes channel", n)
	}

	for name, want := range map[string]string{
		"bad_confidence": "confidence",
		"bad_empty":      "content",
		"bad_type":       "id",
		"missing":        "not found",
		"bad_limit":      "limit",
	} {
		s := step(name)
		if s["is_error"] != true {
			t.Errorf("%s: want a tool error, got %v", name, s)
			continue
		}
		if !strings.Contains(s["text"].(string), want) {
			t.Errorf("%s: error %q does not name %q", name, s["text"], want)
		}
	}
	if s := step("unknown_tool"); s["protocol_error"] != true {
		t.Errorf("unknown tool: want a protocol error, got %v", s)
	}
	if hits := structured("after")["results"].([]any); len(hits) == 0 {
		t.Errorf("server stopped answering after bad calls")
	}

	plan := structured("plan_store")
	if plan["channel_id"] != "global:general" || plan["created"] != true {
		t.Errorf("plan store_message = %v", plan)
	}
	planHits := structured("plan_search")["results"].([]any)
	if len(planHits) != 1 || planHits[0].(map[string]any)["id"] != plan["id"] || planHits[0].(map[string]any)["type"] != "decision" {
		t.Errorf("plan search_messages = %v, want the decision %v", planHits, plan["id"])
	}
	if ch := structured("notes_channel")["channel_id"]; ch != "agent-notes:planner" {
		t.Errorf("get_notes_channel = %v", ch)
	}
	if ch := structured("memory_store")["channel_id"]; ch != "agent-notes:planner" {
		t.Errorf("memory_store went to %v", ch)
	}
}

// toolErrorText is the text a tool result carries (a tool error's
// message), for failure messages.
func toolErrorText(res *mcp.CallToolResult) string {
	if res == nil {
		return "<no result>"
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// TestSeveralMCPProcessesShareADataDir starts three `cairn mcp` processes
// on one data dir (as three agents would) with the official Go SDK client:
// each writes, and each then reads every process's writes.
func TestSeveralMCPProcessesShareADataDir(t *testing.T) {
	bin := buildCairn(t)
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a hang guard: generous on a loaded machine
	defer cancel()
	const n = 3
	sessions := make([]*mcp.ClientSession, n)
	for i := range sessions {
		client := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("agent%d", i), Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin, "mcp", "--data-dir", data, "--tools", "core,notes")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		sessions[i] = cs
	}
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_note", Arguments: map[string]any{
					"agent": fmt.Sprintf("agent%d", i), "project": "shared", "content": fmt.Sprintf("lesson %d from agent %d about sharing", j, i)}})
				if err != nil || res.IsError {
					t.Errorf("agent %d write %d: %v %s", i, j, err, toolErrorText(res))
				}
			}
		}()
	}
	wg.Wait()
	for i, cs := range sessions {
		out := callToolOK(ctx, t, cs, "search_messages", map[string]any{"query": "lesson sharing", "limit": 50, "mode": "keyword"})
		if got := len(out["results"].([]any)); got != n*5 {
			t.Errorf("process %d sees %d notes, want %d", i, got, n*5)
		}
	}
}

// callToolOK calls a tool and returns its structured result, failing the
// test on a protocol or tool error.
func callToolOK(ctx context.Context, t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %s", name, err, toolErrorText(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}
