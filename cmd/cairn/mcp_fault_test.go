package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// mcpPipe runs `cairn mcp` on a new data dir with lines as its whole
// stdin (then end of input) and returns the JSON-RPC messages it wrote,
// checking it exits 0.
func mcpPipe(t *testing.T, bin string, lines []string) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a hang guard: generous on a loaded machine
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "mcp", "--data-dir", t.TempDir(), "--tools", "all")
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cairn mcp: %v\nstderr:\n%s", err, stderr.String())
	}
	var out []map[string]any
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %q", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func rpcLine(t *testing.T, v map[string]any) string {
	t.Helper()
	v["jsonrpc"] = "2.0"
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mcpHandshake(t *testing.T) []string {
	return []string{
		rpcLine(t, map[string]any{"id": "init", "method": "initialize", "params": map[string]any{
			"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "fault", "version": "1"}}}),
		rpcLine(t, map[string]any{"method": "notifications/initialized"}),
	}
}

// byID indexes responses by their id as JSON text ("null" for refusals
// of lines whose id could not be read).
func byID(msgs []map[string]any) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, m := range msgs {
		b, _ := json.Marshal(m["id"])
		out[string(b)] = append(out[string(b)], m)
	}
	return out
}

func errorCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	if e == nil {
		return 0
	}
	c, _ := e["code"].(float64)
	return c
}

// TestFaultMCPBadLinesKeepServing sends every kind of bad line a careless
// or hostile client can write, each followed by a ping: every bad line
// gets its JSON-RPC error (-32700 for what is not JSON, -32600 for JSON
// that is not a JSON-RPC message, with the message's id when it has a
// readable one), and every ping after it is answered.
func TestFaultMCPBadLinesKeepServing(t *testing.T) {
	bin := buildCairn(t)
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	bad := []struct {
		name, line string
		id         string
		code       float64
	}{
		{"not JSON", "this is not json", "null", -32700},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"ping"`, "null", -32700},
		{"bad UTF-8 in a string", "{\"jsonrpc\":\"2.0\",\"id\":\"a\xff\",\"method\":\"ping\"}", "null", -32700},
		{"empty batch", "[]", "null", -32600},
		{"batch", `[{"jsonrpc":"2.0","id":2,"method":"ping"}]`, "null", -32600},
		{"scalar", `42`, "null", -32600},
		{"no jsonrpc", `{"id":3,"method":"ping"}`, "3", -32600},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":4,"method":"ping"}`, "4", -32600},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "null", -32600},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, "null", -32600},
		{"method not a string", `{"jsonrpc":"2.0","id":5,"method":7}`, "5", -32600},
		{"neither request nor response", `{"jsonrpc":"2.0"}`, "null", -32600},
		{"10,000-deep array", deep, "null", -32600},
		{"10,000-deep params", `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":` + deep + `}}`, "null", -32700},
		{"deep params", `{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}}`, "null", -32600},
		{"line over the cap", `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"` + strings.Repeat("x", 20<<20) + `"}}`, "null", -32600},
	}
	lines := mcpHandshake(t)
	for i, b := range bad {
		lines = append(lines, b.line, rpcLine(t, map[string]any{"id": fmt.Sprintf("ping-%d", i), "method": "ping"}))
	}
	got := byID(mcpPipe(t, bin, lines))
	if r := got[`"init"`]; len(r) != 1 || r[0]["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	for i := range bad {
		if r := got[fmt.Sprintf(`"ping-%d"`, i)]; len(r) != 1 || r[0]["result"] == nil {
			t.Errorf("ping after %s: %v", bad[i].name, r)
		}
	}
	// Refusals with an id are matched one to one; the rest come with a
	// null id, in the order of the lines.
	var nullCodes []float64
	for _, m := range got["null"] {
		nullCodes = append(nullCodes, errorCode(m))
	}
	var wantNull []float64
	for _, b := range bad {
		if b.id == "null" {
			wantNull = append(wantNull, b.code)
			continue
		}
		if r := got[b.id]; len(r) != 1 || errorCode(r[0]) != b.code {
			t.Errorf("%s: got %v, want one error %v with id %s", b.name, r, b.code, b.id)
		}
	}
	if fmt.Sprint(nullCodes) != fmt.Sprint(wantNull) {
		t.Errorf("errors with a null id: codes %v, want %v", nullCodes, wantNull)
	}
}

// TestFaultMCPAnswersEveryQueuedCallAtEndOfInput pipes 50 write_note calls
// and closes stdin at once: the server answers all 50, each a new stored
// note with its own id, before it exits.
func TestFaultMCPAnswersEveryQueuedCallAtEndOfInput(t *testing.T) {
	bin := buildCairn(t)
	const n = 50
	lines := mcpHandshake(t)
	for i := range n {
		lines = append(lines, rpcLine(t, map[string]any{"id": i, "method": "tools/call", "params": map[string]any{
			"name": "write_note", "arguments": map[string]any{"agent": "piper", "content": fmt.Sprintf("piped note %d", i)}}}))
	}
	got := byID(mcpPipe(t, bin, lines))
	ids := map[any]bool{}
	for i := range n {
		r := got[fmt.Sprint(i)]
		if len(r) != 1 {
			t.Errorf("call %d: %d answers", i, len(r))
			continue
		}
		res, _ := r[0]["result"].(map[string]any)
		sc, _ := res["structuredContent"].(map[string]any)
		if res == nil || res["isError"] == true || sc["created"] != true {
			t.Errorf("call %d: %v", i, r[0])
			continue
		}
		ids[sc["id"]] = true
	}
	if len(ids) != n {
		t.Errorf("%d distinct notes stored, want %d", len(ids), n)
	}
}

// TestFaultMCPProtocolErrorsHaveCodes: a request with a null id (MCP ids
// are strings or numbers) is answered with an invalid request error and a
// null id, not ignored; a tools/call before initialize is answered with a
// JSON-RPC error code (-32600), not 0; the session then works.
func TestFaultMCPProtocolErrorsHaveCodes(t *testing.T) {
	bin := buildCairn(t)
	lines := []string{rpcLine(t, map[string]any{"id": "early", "method": "tools/call", "params": map[string]any{"name": "list_channels", "arguments": map[string]any{}}})}
	lines = append(lines, mcpHandshake(t)...)
	lines = append(lines,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		rpcLine(t, map[string]any{"id": "after", "method": "ping"}))
	got := byID(mcpPipe(t, bin, lines))
	if r := got[`"early"`]; len(r) != 1 || errorCode(r[0]) != -32600 {
		t.Errorf("tools/call before initialize: %v, want one error -32600", r)
	}
	if r := got["null"]; len(r) != 1 || errorCode(r[0]) != -32600 {
		t.Errorf("a request with a null id: %v, want one error -32600 with a null id", r)
	}
	if r := got[`"after"`]; len(r) != 1 || r[0]["result"] == nil {
		t.Errorf("ping after: %v", r)
	}
}
