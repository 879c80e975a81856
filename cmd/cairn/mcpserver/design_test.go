package mcpserver_test

import (
	"context"
	"testing"
)

// TestToolsDescribeThemselves: every tool has a title and hints (local
// only; reads read-only; only memory_delete destructive), and the search
// schema states its bounds and takes where as an object.
func TestToolsDescribeThemselves(t *testing.T) {
	cs, _ := connect(t, openDir(t.TempDir()))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		a := tl.Annotations
		if tl.Title == "" || a == nil || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: title %q, annotations %+v", tl.Name, tl.Title, a)
			continue
		}
		if destructive := a.DestructiveHint != nil && *a.DestructiveHint; destructive != (tl.Name == "memory_delete") {
			t.Errorf("%s: destructiveHint %v", tl.Name, destructive)
		}
		if tl.Name == "search_messages" {
			props := tl.InputSchema.(map[string]any)["properties"].(map[string]any)
			if props["where"].(map[string]any)["type"] != "object" || props["mode"].(map[string]any)["enum"] == nil || props["limit"].(map[string]any)["maximum"] == nil {
				t.Errorf("search_messages schema: %v", props)
			}
		}
	}
}

// TestDesignAPI calls the tools as agents written against the
// implementation plan and the vector-memory design do, on their first
// call.
func TestDesignAPI(t *testing.T) {
	cs, _ := connect(t, openDir(t.TempDir()))
	ok := func(name string, args map[string]any) map[string]any { t.Helper(); return callOK(t, cs, name, args) }
	stored := ok("store_message", map[string]any{"channel_id": "global:general", "sender_id": "planner", "content": "blue green deploys removed downtime",
		"metadata": map[string]any{"type": "decision"}, "confidence": 0.9})
	ok("store_message", map[string]any{"channel_id": "project:backend", "sender_id": "coder", "content": "deploys run at noon", "confidence": 0.3})
	hits := ok("search_messages", map[string]any{"query": "deploys", "limit": 5, "ranking_profile": "quality",
		"filters": map[string]any{"channel_ids": []string{"global:general"}, "message_type": "decision", "min_confidence": 0.5}})["results"].([]any)
	if len(hits) != 1 || hits[0].(map[string]any)["id"] != stored["id"] || hits[0].(map[string]any)["type"] != "decision" {
		t.Errorf("plan search: %v", hits)
	}
	custom := ok("search_messages", map[string]any{"query": "deploys", "mode": "keyword",
		"ranking_profile": map[string]any{"similarity_weight": 0.2, "confidence_weight": 0.8, "decay_weight": 0, "decay_half_life_hours": 24}})["results"].([]any)
	if len(custom) != 2 || custom[0].(map[string]any)["id"] != stored["id"] {
		t.Errorf("custom ranking: %v", custom)
	}
	if ch := ok("get_notes_channel", map[string]any{"agent_id": "planner"})["channel_id"]; ch != "agent-notes:planner" {
		t.Errorf("get_notes_channel = %v", ch)
	}
	chans := ok("list_channels", map[string]any{"scope": "all"})["channels"].([]any)
	if len(chans) < 2 {
		t.Errorf("list_channels: %v", chans)
	}
	mem := ok("memory_store", map[string]any{"sender_id": "planner", "content": "remember the staging password rotates weekly"})
	if mem["channel_id"] != "agent-notes:planner" {
		t.Errorf("memory_store without a channel went to %v", mem["channel_id"])
	}
	if got := ok("memory_get", map[string]any{"id": mem["id"]}); got["content"] != "remember the staging password rotates weekly" {
		t.Errorf("memory_get: %v", got)
	}
	if hits := ok("memory_search", map[string]any{"query": "staging password", "mode": "keyword"})["results"].([]any); len(hits) != 1 {
		t.Errorf("memory_search: %v", hits)
	}
	for _, bad := range []map[string]any{
		{"channel": "a", "channel_id": "b", "sender": "x", "content": "y"},
		{"sender": "x", "content": "no channel"},
	} {
		if res, _ := call(t, cs, "store_message", bad); !res.IsError {
			t.Errorf("store_message %v: want a tool error", bad)
		}
	}
	if res, _ := call(t, cs, "search_messages", map[string]any{"query": "x", "filters": map[string]any{"colour": "red"}}); !res.IsError {
		t.Error("unknown filter accepted")
	}
}
