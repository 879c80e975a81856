package mcpserver_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/mcpserver"
)

// TestResultBytesBounded: through the official MCP SDK client, a search's
// or a listing's messages are cut at MaxResultBytes at a whole message and
// the result says so ("truncated": true, "max_result_bytes"); get_unread's
// last_id names the last message listed; a result within the bound (the
// default first lines of the same messages) carries neither field.
func TestResultBytesBounded(t *testing.T) {
	const bound = 250_000 // two of the 100 KB messages, not three
	cs, _ := connectWith(t, mcpserver.Options{Open: openDir(t.TempDir()), Version: "test", Tools: []string{mcpserver.ToolsAll}, MaxResultBytes: bound})
	for i := range 5 {
		content := fmt.Sprintf("needle %d ", i) + strings.Repeat(fmt.Sprintf("word%d ", i), 100_000/7)
		callOK(t, cs, "write_note", map[string]any{"agent": "ann", "content": content})
	}
	for _, c := range []struct {
		tool      string
		args      map[string]any
		want      int
		truncated bool
	}{
		{"search_messages", map[string]any{"query": "needle", "mode": "keyword", "limit": 5, "full": true}, 2, true},
		{"search_messages", map[string]any{"query": "needle", "mode": "keyword", "limit": 5}, 5, false},
		{"get_notes", map[string]any{"agent": "ann", "limit": 5, "full": true}, 2, true},
		{"get_channel_messages", map[string]any{"channel": "agent-notes:ann", "limit": 5, "full": true}, 2, true},
		{"get_unread", map[string]any{"agent": "bob", "limit": 5, "full": true}, 2, true},
	} {
		out := callOK(t, cs, c.tool, c.args)
		got, _ := out["results"].([]any)
		_, hasLimit := out["max_result_bytes"]
		if len(got) != c.want || (out["truncated"] == true) != c.truncated || hasLimit != c.truncated ||
			(c.truncated && out["max_result_bytes"] != float64(bound)) {
			t.Errorf("%s %v: %d results, truncated %v, max_result_bytes %v; want %d, truncated %v", c.tool, c.args, len(got), out["truncated"], out["max_result_bytes"], c.want, c.truncated)
		}
		if c.tool == "get_unread" && len(got) == 2 && out["last_id"] != got[1].(map[string]any)["id"] {
			t.Errorf("get_unread last_id = %v, want the last listed message's id %v", out["last_id"], got[1].(map[string]any)["id"])
		}
	}
}
