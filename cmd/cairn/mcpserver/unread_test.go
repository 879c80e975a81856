package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestUnreadTools(t *testing.T) {
	cs, _ := connect(t, openDir(t.TempDir()))
	var ids []any
	for _, n := range []struct{ agent, content string }{{"bob", "bob's first"}, {"ann", "ann's own"}, {"bob", "bob's second"}} {
		res, out := call(t, cs, "write_note", map[string]any{"agent": n.agent, "project": "p1", "content": n.content})
		if res.IsError {
			t.Fatalf("write_note: %s", errText(res))
		}
		ids = append(ids, out["id"])
	}
	res, out := call(t, cs, "get_unread", map[string]any{"agent": "ann", "project": "p1", "limit": 1})
	if res.IsError || out["unread"] != 2.0 || out["last_id"] != ids[0] || len(out["results"].([]any)) != 1 {
		t.Fatalf("get_unread: %s %v", errText(res), out)
	}
	res, out = call(t, cs, "mark_read", map[string]any{"agent": "ann", "up_to": out["last_id"]})
	if res.IsError || out["last_read_id"] != ids[0] {
		t.Fatalf("mark_read: %s %v", errText(res), out)
	}
	res, out = call(t, cs, "search_messages", map[string]any{"unread_by": "ann"})
	if hs := out["results"].([]any); res.IsError || len(hs) != 1 || hs[0].(map[string]any)["id"] != ids[2] {
		t.Fatalf("search unread_by: %s %v", errText(res), out)
	}
	if res, _ = call(t, cs, "mark_read", map[string]any{"agent": "ann"}); res.IsError {
		t.Fatalf("mark_read everything: %s", errText(res))
	}
	if res, out = call(t, cs, "get_unread", map[string]any{"agent": "ann"}); res.IsError || out["unread"] != 0.0 || len(out["results"].([]any)) != 0 {
		t.Fatalf("get_unread after marking: %s %v", errText(res), out)
	}

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		switch tl.Name {
		case "get_unread":
			if tl.Title == "" || tl.Annotations == nil || !tl.Annotations.ReadOnlyHint {
				t.Errorf("get_unread: title %q annotations %+v", tl.Title, tl.Annotations)
			}
		case "mark_read":
			if tl.Title == "" || tl.Annotations == nil || !tl.Annotations.IdempotentHint || tl.Annotations.ReadOnlyHint {
				t.Errorf("mark_read: title %q annotations %+v", tl.Title, tl.Annotations)
			}
		}
	}

	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_unread", map[string]any{"agent": "a b"}, "agent"},
		{"get_unread", map[string]any{"agent": "ann", "channel": "nope"}, "not found"},
		{"get_unread", map[string]any{"agent": "ann", "limit": 101}, "limit"},
		{"mark_read", map[string]any{"agent": "ann", "up_to": 999}, "up_to"},
		{"mark_read", map[string]any{"agent": "ann", "channel": "agent-notes:bob:p1", "project": "p1"}, "channel/project"},
		{"search_messages", map[string]any{"unread_by": "a b"}, "unread_by"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil || !res.IsError || !strings.Contains(errText(res), c.want) {
			t.Errorf("%s %v: %v %q, want a tool error naming %q", c.tool, c.args, err, errText(res), c.want)
		}
	}
}
