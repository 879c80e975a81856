package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fixedHead is a breadcrumb repository whose HEAD does not move.
type fixedHead string

func (h fixedHead) Head(string) (string, error) { return string(h), nil }

// TestBreadcrumbMarksOverMCP: get_message and search_messages carry the
// cached marks, and search_messages takes breadcrumbs_valid and
// demote_stale (in its schema, and with a tool error naming a bad one).
func TestBreadcrumbMarksOverMCP(t *testing.T) {
	ctx := context.Background()
	head := strings.Repeat("c", 40)
	eng, err := sqlite.OpenEngine(ctx, t.TempDir(), engine.Options{BreadcrumbRepos: fixedHead(head), BreadcrumbRepo: "/src/app"}, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	cs, _ := connect(t, func(context.Context) (*engine.Engine, error) { return eng, nil })
	var ids []int64
	for _, content := range []string{"retry loop one", "retry loop two"} {
		res, out := call(t, cs, "write_note", map[string]any{"agent": "bob", "content": content, "breadcrumbs": map[string]any{"files": []string{"a.go:1-2"}}})
		if res.IsError {
			t.Fatalf("write_note: %s", errText(res))
		}
		ids = append(ids, int64(out["id"].(float64)))
	}
	if err := ops.PutBreadcrumbMarks(ctx, eng, "/src/app", head, map[int64][]engine.BreadcrumbMark{
		ids[0]: {{Kind: "files", Ref: "a.go:1-2", State: engine.MarkValid}},
		ids[1]: {{Kind: "files", Ref: "a.go:1-2", State: engine.MarkMoved, MovedTo: "b.go"}, {Kind: "commits", Ref: "abcd", State: engine.MarkGone}},
	}); err != nil {
		t.Fatal(err)
	}

	type hit struct {
		ID              int64                   `json:"id"`
		BreadcrumbCheck *engine.BreadcrumbCheck `json:"breadcrumb_check"`
		Scores          *engine.Scores          `json:"scores"`
	}
	decode := func(v any, into any) {
		t.Helper()
		b, _ := json.Marshal(v)
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatal(err)
		}
	}
	res, out := call(t, cs, "get_message", map[string]any{"id": ids[1]})
	var h hit
	decode(out, &h)
	if res.IsError || h.BreadcrumbCheck == nil || h.BreadcrumbCheck.Status != engine.CheckCurrent || len(h.BreadcrumbCheck.Marks) != 2 || h.BreadcrumbCheck.Marks[0].MovedTo != "b.go" {
		t.Fatalf("get_message: %s %v", errText(res), out)
	}

	var hits struct{ Results []hit }
	res, out = call(t, cs, "search_messages", map[string]any{"query": "retry loop", "mode": "keyword", "breadcrumbs_valid": true})
	decode(out, &hits)
	if res.IsError || len(hits.Results) != 1 || hits.Results[0].ID != ids[0] || hits.Results[0].BreadcrumbCheck == nil {
		t.Fatalf("breadcrumbs_valid: %s %v", errText(res), out)
	}
	res, out = call(t, cs, "search_messages", map[string]any{"query": "retry loop", "mode": "keyword", "demote_stale": 0.5, "full": true})
	decode(out, &hits)
	if res.IsError || len(hits.Results) != 2 || hits.Results[1].ID != ids[1] || !hits.Results[1].Scores.Demoted || hits.Results[0].Scores.Demoted {
		t.Fatalf("demote_stale: %s %v", errText(res), out)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_messages", Arguments: map[string]any{"query": "x", "demote_stale": 2}})
	if err != nil || !res.IsError || !strings.Contains(errText(res), "demote_stale") {
		t.Fatalf("demote_stale 2: %v %s", err, errText(res))
	}

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name != "search_messages" {
			continue
		}
		b, _ := json.Marshal(tl.InputSchema)
		for _, field := range []string{`"breadcrumbs_valid"`, `"demote_stale"`} {
			if !strings.Contains(string(b), field) {
				t.Errorf("search_messages input schema lacks %s", field)
			}
		}
	}
}
