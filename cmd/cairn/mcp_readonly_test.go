package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPReadOnlyDataDir: `cairn mcp` on a data dir it may not write
// (another user's, or chmod -w) answers every read tool, says once at
// start that it serves read-only, and answers every write tool with the
// tool error read_only naming the directory, before anything is written:
// the data dir is unchanged after.
func TestMCPReadOnlyDataDir(t *testing.T) {
	bin := buildCairn(t)
	data := t.TempDir()
	if out, err := exec.Command(bin, "note", "--data-dir", data, "--agent", "ann", "the parser is flaky on empty input").CombinedOutput(); err != nil {
		t.Fatalf("note: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "mcp", "--tools", "all")
	cmd.Env = []string{"CAIRN_DATA_DIR=" + data, "HOME=" + os.TempDir(), "PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: makeReadOnly(t, bin, data)}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	before := dirListing(t, data)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "ann", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}

	reads := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search_messages", map[string]any{"query": "parser", "limit": 1}, "flaky"},
		{"search_messages", map[string]any{"query": "a tokenizer that breaks on blank input", "mode": "semantic", "limit": 1}, "flaky"},
		{"get_message", map[string]any{"id": 1}, "flaky"},
		{"get_notes", map[string]any{"agent": "ann"}, "flaky"},
		{"list_channels", map[string]any{}, "agent-notes:ann"},
		{"get_unread", map[string]any{"agent": "bob"}, "flaky"},
		{"memory_stats", map[string]any{}, "messages"},
	}
	for _, r := range reads {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: r.tool, Arguments: r.args})
		if err != nil || res.IsError || !strings.Contains(toolErrorText(res), r.want) {
			t.Errorf("%s on a read-only data dir: %v %s, want %q", r.tool, err, toolErrorText(res), r.want)
		}
	}
	writes := []struct {
		tool string
		args map[string]any
	}{
		{"store_message", map[string]any{"channel": "c", "sender": "ann", "content": "a write"}},
		{"write_note", map[string]any{"agent": "ann", "content": "a write"}},
		{"memory_store", map[string]any{"sender": "ann", "content": "a write"}},
		{"mark_read", map[string]any{"agent": "bob"}},
		{"memory_delete", map[string]any{"id": 1, "confirm": "delete message 1"}},
	}
	for _, w := range writes {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: w.tool, Arguments: w.args})
		if text := toolErrorText(res); err != nil || !res.IsError || !strings.Contains(text, "read_only") || !strings.Contains(text, data) {
			t.Errorf("%s on a read-only data dir: %v %s, want the tool error read_only naming %s", w.tool, err, text, data)
		}
	}
	cs.Close()
	if n := strings.Count(stderr.String(), "serving read-only"); n != 1 || !strings.Contains(stderr.String(), data) {
		t.Errorf("mcp logged %d lines saying it serves read-only, want 1 naming %s:\n%s", n, data, stderr.String())
	}
	if after := dirListing(t, data); after != before {
		t.Errorf("the data dir changed:\n%s\nwas\n%s", after, before)
	}
}
