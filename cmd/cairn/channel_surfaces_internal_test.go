package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/cairnapi"
	"github.com/cairn-dev/cairn/engine"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestChannelRuleSurfacesAgree writes to channels that do not exist yet
// through the four writers (cairn post, the HTTP API, MCP store_message
// and cairn import messages): all four create a missing channel (the
// designs' global:general and project:backend included) with the same
// type, and all four refuse the same bad ids naming the channel field.
func TestChannelRuleSurfacesAgree(t *testing.T) {
	cliEnv, url, cs := threeSurfaces(t)
	importEnv := envMap(map[string]string{"CAIRN_DATA_DIR": t.TempDir(), "CAIRN_MODEL": "none"})
	cases := []struct{ channel, want, typ string }{
		{"fresh", "", "channel"},
		{"global:general", "", "channel"},
		{"project:backend", "", "project"},
		{"project:backend:incidents", "", "project"},
		{"project:backend:decisions", "", "project"},
		{"agent-notes:ann", "", "agent-notes"},
		{"bad channel", "invalid channel", ""},
		{"project:backend:", "invalid channel", ""},
	}
	for _, c := range cases {
		msg, err := json.Marshal(map[string]string{"channel": c.channel, "sender": "ann", "content": "first words in " + c.channel})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{
			"cli":    cliWriteOutcome(t, cliEnv, "post", "--channel", c.channel, "--sender", "ann", "first words in "+c.channel),
			"http":   httpPostOutcome(t, url+cairnapi.Prefix+"/messages", string(msg)),
			"mcp":    mcpToolOutcome(t, cs, "store_message", string(msg)),
			"import": importOutcome(t, importEnv, string(msg)),
		}
		for surface, g := range got {
			if g != c.want {
				t.Errorf("%s: write to %q: %q, want %q (all: %v)", surface, c.channel, g, c.want, got)
			}
		}
	}

	// Every surface now lists the created channels with the same types.
	want := map[string]string{}
	for _, c := range cases {
		if c.want == "" {
			want[c.channel] = c.typ
		}
	}
	lists := map[string][]byte{}
	lists["cli"] = []byte(cliStdout(t, cliEnv, "channels", "--json"))
	lists["import"] = []byte(cliStdout(t, importEnv, "channels", "--json"))
	lists["http"] = httpGet(t, url+cairnapi.Prefix+"/channels")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_channels", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list_channels: %v %v", err, res)
	}
	lists["mcp"], _ = json.Marshal(res.StructuredContent)
	for surface, b := range lists {
		got := channelTypes(t, b)
		for id, typ := range want {
			if got[id] != typ {
				t.Errorf("%s lists %q as %q, want %q", surface, id, got[id], typ)
			}
		}
	}
}

// cliWriteOutcome runs a CLI command: "" on success, "invalid FIELD" for
// bad input.
func cliWriteOutcome(t *testing.T, env func(string) string, args ...string) string {
	t.Helper()
	_, stderr, code := runCLI(t, env, "", args...)
	switch {
	case code == 0:
		return ""
	case code == 2:
		if f := invalidField(stderr, "cairn: "); f != "" {
			return f
		}
	}
	return "exit " + string(rune('0'+code)) + ": " + stderr
}

// importOutcome imports one line with `cairn import messages`: "" when it
// is imported, "invalid FIELD" when the line is refused naming FIELD.
func importOutcome(t *testing.T, env func(string) string, line string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "m.jsonl")
	if err := os.WriteFile(file, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, env, "", "import", "messages", file)
	if code == 0 {
		return ""
	}
	// A refused line is reported as "FILE:1: invalid FIELD: ...".
	if rest, ok := strings.CutPrefix(stderr, file+":1: "); ok {
		if f := invalidField(rest, ""); f != "" {
			return f
		}
	}
	return "exit " + string(rune('0'+code)) + ": " + stderr
}

func cliStdout(t *testing.T, env func(string) string, args ...string) string {
	t.Helper()
	out, stderr, code := runCLI(t, env, "", args...)
	if code != 0 {
		t.Fatalf("cairn %v: exit %d: %s", args, code, stderr)
	}
	return out
}

// channelTypes reads a channel listing into id -> type: one JSON
// channel a line (the CLI), or an object whose "results" (HTTP) or
// "channels" (MCP) lists them.
func channelTypes(t *testing.T, b []byte) map[string]string {
	t.Helper()
	type channel struct {
		ID   string `json:"id"`
		Type string `json:"channel_type"`
	}
	var list []channel
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var v struct {
			channel
			Results, Channels []channel
		}
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("channel listing %s: %v", b, err)
		}
		list = append(append(append(list, v.channel), v.Results...), v.Channels...)
	}
	out := map[string]string{}
	for _, c := range list {
		out[c.ID] = c.Type
	}
	return out
}

func httpGet(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s %v", url, resp.Status, b, err)
	}
	return b
}

// TestMetadataShapeSurfacesAgree: metadata nested deeper than
// engine.MaxMetadataDepth, with a NUL in a key or a value, or with a key
// given twice is refused naming metadata by every writer (cairn post, the
// HTTP API, MCP store_message, cairn import messages), and metadata at
// the depth limit is stored. Metadata 1,000 deep is refused by the CLI
// and import naming metadata; the HTTP API and the MCP stdio transport
// bound a whole message's nesting before that (an invalid body, an
// invalid request), so it is not sent to them here.
func TestMetadataShapeSurfacesAgree(t *testing.T) {
	cliEnv, url, cs := threeSurfaces(t)
	importEnv := envMap(map[string]string{"CAIRN_DATA_DIR": t.TempDir(), "CAIRN_MODEL": "none"})
	nested := func(depth int) string { // depth objects, the outer one included
		return strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
	}
	for _, c := range []struct{ name, meta, want string }{
		{"at the depth limit", nested(engine.MaxMetadataDepth), ""},
		{"nested 1,000 deep", nested(1000), "invalid metadata"},
		{"one over the depth limit", nested(engine.MaxMetadataDepth + 1), "invalid metadata"},
		{"NUL in a key", `{"a\u0000b":1}`, "invalid metadata"},
		{"NUL in a value", `{"a":["x\u0000y"]}`, "invalid metadata"},
		{"a key twice", `{"a":1,"b":{"c":1,"c":2}}`, "invalid metadata"},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg := `{"channel":"shapes","sender":"ann","content":"metadata ` + c.name + `","metadata":` + c.meta + `}`
			got := map[string]string{
				"cli":    cliWriteOutcome(t, cliEnv, "post", "--channel", "shapes", "--sender", "ann", "--meta", c.meta, "metadata "+c.name),
				"import": importOutcome(t, importEnv, msg),
			}
			if len(c.meta) < 1000 {
				got["http"] = httpPostOutcome(t, url+cairnapi.Prefix+"/messages", msg)
				got["mcp"] = mcpToolOutcome(t, cs, "store_message", msg)
			}
			for surface, g := range got {
				if g != c.want {
					t.Errorf("%s: %q, want %q (all: %v)", surface, g, c.want, got)
				}
			}
		})
	}
}

// TestBodyDuplicateKeysRefused: a cairn API body giving a key twice in
// one object is refused naming the field it is in (decoding would keep the
// last one silently); the same key in two objects is fine.
func TestBodyDuplicateKeysRefused(t *testing.T) {
	_, url, _ := threeSurfaces(t)
	for body, want := range map[string]string{
		`{"channel":"dups","sender":"ann","content":"first","content":"second"}`:                            "invalid body",
		`{"channel":"dups","sender":"ann","content":"x","breadcrumbs":{"files":["a.go"],"files":["b.go"]}}`: "invalid breadcrumbs",
		`{"channel":"dups","sender":"ann","content":"once","metadata":{"a":{"k":1},"b":{"k":2}}}`:           "",
	} {
		if got := httpPostOutcome(t, url+cairnapi.Prefix+"/messages", body); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}
