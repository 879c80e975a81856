package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestContinuousExportMCP: with export.continuous, a write and a delete
// through a real `cairn mcp` process (the official Go SDK client) update
// the channel's export files as a CLI write does: while the process runs,
// and at the latest when it exits.
func TestContinuousExportMCP(t *testing.T) {
	bin := buildCairn(t)
	data := t.TempDir()
	exp := filepath.Join(t.TempDir(), "exp")
	if err := os.WriteFile(filepath.Join(data, "config.toml"), []byte("[export]\ncontinuous = true\ndir = \""+filepath.ToSlash(exp)+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(exp, "messages", "agent-notes%3Aann.jsonl")
	read := func() string {
		b, _ := os.ReadFile(file)
		return string(b)
	}
	// eventually waits for the export, which runs after the tool call has
	// answered (the write is durable before it).
	eventually := func(what string, ok func(string) bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(read()); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the export file holds:\n%s", what, read())
			}
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "ann", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin, "mcp", "--data-dir", data, "--tools", "all")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) map[string]any {
		t.Helper()
		return callToolOK(ctx, t, cs, name, args)
	}

	first := call("write_note", map[string]any{"agent": "ann", "content": "first note through mcp"})
	eventually("after the first write", func(s string) bool { return strings.Contains(s, "first note through mcp") })
	call("write_note", map[string]any{"agent": "ann", "content": "second note through mcp"})
	eventually("after the second write", func(s string) bool { return strings.Contains(s, "second note through mcp") })

	id := int64(first["id"].(float64))
	call("memory_delete", map[string]any{"id": id, "confirm": fmt.Sprintf("delete message %d", id)})
	eventually("after the delete", func(s string) bool {
		return !strings.Contains(s, "first note through mcp") && strings.Contains(s, "second note through mcp")
	})

	// A write just before the process exits is exported by then.
	call("write_note", map[string]any{"agent": "ann", "content": "last note before exit"})
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if s := read(); !strings.Contains(s, "last note before exit") {
		t.Errorf("export after the process exited lacks the last note:\n%s", s)
	}
}
