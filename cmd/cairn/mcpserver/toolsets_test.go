package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxDefaultListBytes bounds the default tools/list result: every byte of
// it is sent to the model in every session.
const maxDefaultListBytes = 6 * 1024

func listTools(t *testing.T, cs *mcp.ClientSession) ([]string, int) {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names, len(b)
}

// TestDefaultToolsAreLean: without Options.Tools the server lists the
// core set only, at most five tools in at most 6 KB, and each of them
// works.
func TestDefaultToolsAreLean(t *testing.T) {
	cs, _ := connectWith(t, mcpserver.Options{Open: openDir(t.TempDir()), Version: "test"})
	names, size := listTools(t, cs)
	want := []string{"get_message", "get_notes_channel", "list_channels", "search_messages", "store_message"}
	if !slices.Equal(names, want) {
		t.Errorf("default tools = %v, want %v", names, want)
	}
	if size > maxDefaultListBytes {
		t.Errorf("default tools/list is %d bytes, want at most %d", size, maxDefaultListBytes)
	}
	ok := func(name string, args map[string]any) map[string]any { t.Helper(); return callOK(t, cs, name, args) }
	stored := ok("store_message", map[string]any{"channel": "project:p1:decisions", "sender": "ann", "project": "p1",
		"content": "We pin the toolchain in go.mod", "type": "decision", "breadcrumbs": map[string]any{"files": []string{"go.mod"}}})
	hits := ok("search_messages", map[string]any{"query": "toolchain pin", "project": "p1", "mode": "keyword",
		"where": map[string]any{"message_type": "decision"}, "demote_stale": 0.5})["results"].([]any)
	if len(hits) != 1 || hits[0].(map[string]any)["id"] != stored["id"] {
		t.Errorf("search_messages = %v", hits)
	}
	if got := ok("get_message", map[string]any{"id": stored["id"]}); got["content"] != "We pin the toolchain in go.mod" {
		t.Errorf("get_message = %v", got)
	}
	if got := ok("get_notes_channel", map[string]any{"agent_id": "ann", "project": "p1"}); got["channel_id"] != "agent-notes:ann:p1" {
		t.Errorf("get_notes_channel = %v", got)
	}
	if chans := ok("list_channels", map[string]any{"project": "p1"})["channels"].([]any); len(chans) != 3 { // a project's three knowledge channels
		t.Errorf("list_channels = %v", chans)
	}
	// The compact schema states filters as an object only; a misspelt
	// nested field is still refused, naming it.
	res, _ := call(t, cs, "search_messages", map[string]any{"query": "x", "filters": map[string]any{"colour": "red"}})
	if !res.IsError || !strings.Contains(errText(res), "colour") {
		t.Errorf("unknown nested filter: %v %s", res.IsError, errText(res))
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_search", Arguments: map[string]any{"query": "x"}}); err == nil {
		t.Error("memory_search served without the memory set")
	}
}

// TestOptInToolSets: each opt-in set adds its tools, all lists every
// tool, and an unknown set is refused by New.
func TestOptInToolSets(t *testing.T) {
	dir := t.TempDir()
	sets := map[string][]string{
		mcpserver.ToolsMemory:   {"memory_delete", "memory_get", "memory_search", "memory_stats", "memory_store"},
		mcpserver.ToolsNotes:    {"get_notes", "write_note"},
		mcpserver.ToolsChannels: {"get_channel_messages"},
		mcpserver.ToolsUnread:   {"get_unread", "mark_read"},
	}
	var every []string
	core, _ := listTools(t, func() *mcp.ClientSession {
		cs, _ := connectWith(t, mcpserver.Options{Open: openDir(dir), Version: "test"})
		return cs
	}())
	every = append(every, core...)
	for set, want := range sets {
		cs, _ := connectWith(t, mcpserver.Options{Open: openDir(dir), Version: "test", Tools: []string{set}})
		names, _ := listTools(t, cs)
		if !slices.Equal(names, want) {
			t.Errorf("set %s lists %v, want %v", set, names, want)
		}
		every = append(every, want...)
	}
	slices.Sort(every)
	cs, _ := connectWith(t, mcpserver.Options{Open: openDir(dir), Version: "test", Tools: []string{mcpserver.ToolsAll}})
	names, size := listTools(t, cs)
	if !slices.Equal(names, every) {
		t.Errorf("all lists %v, want %v", names, every)
	}
	t.Logf("tools/list: all %d tools, %d bytes", len(names), size)
	res, out := call(t, cs, "memory_store", map[string]any{"sender": "ann", "content": "staging rotates keys weekly"})
	if res.IsError || out["channel_id"] != "agent-notes:ann" {
		t.Errorf("memory_store: %s %v", errText(res), out)
	}
	if _, err := mcpserver.New(mcpserver.Options{Open: openDir(dir), Tools: []string{"everything"}}); !errors.Is(err, mcpserver.ErrUnknownToolSet) {
		t.Errorf("unknown tool set: %v", err)
	}
}
