package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestClaudeCodePlugin writes the Claude Code plugin with `cairn setup
// claude-code --plugin DIR` and checks its files against the documented
// layout (.claude-plugin/plugin.json with a kebab-case name, .mcp.json at
// the root, hooks/hooks.json in the settings' hooks format), then uses
// them as Claude Code would: the hook commands through the shell with
// its JSON on stdin, the MCP server from its command line with the
// official SDK client. The user's own files are not touched, and
// --uninstall removes exactly what it wrote.
func TestClaudeCodePlugin(t *testing.T) {
	bin := buildCairn(t)
	if resolved, err := filepath.EvalSymlinks(bin); err == nil {
		bin = resolved
	}
	h := newAgentHome(t, bin)
	before := h.snapshot()
	dir := filepath.Join(t.TempDir(), "cairn-plugin")

	if out := h.cairn("setup", "claude-code", "--plugin", dir, "--dry-run"); !strings.Contains(out, "would create  "+filepath.Join(dir, ".mcp.json")) {
		t.Errorf("dry run:\n%s", out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("dry run wrote %s", dir)
	}
	h.cairn("setup", "claude-code", "--plugin", dir)
	sameFiles(t, "the user's files after writing the plugin", h.snapshot(), before)
	if out := h.cairn("setup", "claude-code", "--plugin", dir); strings.Contains(out, "created") {
		t.Errorf("second run changed files:\n%s", out)
	}

	manifest := readJSON(t, filepath.Join(dir, ".claude-plugin", "plugin.json"))
	if name, _ := manifest["name"].(string); !regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`).MatchString(name) || manifest["description"] == "" {
		t.Errorf("plugin.json: %v", manifest)
	}
	servers := readJSON(t, filepath.Join(dir, ".mcp.json"))
	server, _ := servers["cairn"].(map[string]any)
	if server == nil || server["command"] != bin {
		t.Fatalf(".mcp.json: %v", servers)
	}
	hooks := readJSON(t, filepath.Join(dir, "hooks", "hooks.json"))
	var events []string
	for ev := range hooks["hooks"].(map[string]any) {
		events = append(events, ev)
	}
	slices.Sort(events)
	if !slices.Equal(events, []string{"PreCompact", "SessionEnd", "SessionStart", "UserPromptSubmit"}) {
		t.Errorf("hooks.json events: %v", events)
	}
	start, prompt := hookCommands(t, hooks, "SessionStart"), hookCommands(t, hooks, "UserPromptSubmit")
	if len(start) != 1 || len(prompt) != 1 {
		t.Fatalf("hooks.json: %v", hooks)
	}

	// The hooks as Claude Code runs them: the instruction and the
	// briefing at session start, the prompt's recall after.
	proj := filepath.Join(t.TempDir(), "shop")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	h.cairn("note", "--agent", "claude", "--project", "shop", "--type", "decision", "Invoices are immutable; corrections are credit notes")
	stdout, stderr, code := h.runHook(start[0], proj, map[string]any{"session_id": "p1", "cwd": proj, "hook_event_name": "SessionStart", "source": "startup"})
	if code != 0 || stderr != "" {
		t.Fatalf("plugin SessionStart: exit %d %s", code, stderr)
	}
	if ctx := hookContext(t, stdout, "SessionStart"); !strings.HasPrefix(ctx, "## Memory (cairn)") || !strings.Contains(ctx, "Invoices are immutable") {
		t.Errorf("plugin SessionStart context:\n%s", ctx)
	}
	stdout, _, code = h.runHook(prompt[0], proj, map[string]any{"session_id": "p2", "cwd": proj, "hook_event_name": "UserPromptSubmit", "prompt": "How do we correct an invoice?"})
	if ctx := hookContext(t, stdout, "UserPromptSubmit"); code != 0 || !strings.Contains(ctx, "Invoices are immutable") {
		t.Errorf("plugin UserPromptSubmit: exit %d\n%s", code, ctx)
	}

	// The MCP server from .mcp.json serves the default tools.
	var args []string
	for _, a := range server["args"].([]any) {
		args = append(args, a.(string))
	}
	cmd := exec.Command(server["command"].(string), args...)
	cmd.Env = append(os.Environ(), "HOME="+h.home)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "test"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	cs.Close()
	if err != nil || len(tools.Tools) != 5 {
		t.Errorf("plugin MCP server tools: %v %d", err, len(tools.Tools))
	}

	// A directory holding another file of the plugin's names is refused.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, ".mcp.json"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(bin, "setup", "claude-code", "--plugin", other)
	c.Env = h.env()
	if out, err := c.CombinedOutput(); err == nil || !strings.Contains(string(out), "not cairn's") {
		t.Errorf("plugin over another .mcp.json: %v\n%s", err, out)
	}

	h.cairn("setup", "claude-code", "--plugin", dir, "--uninstall")
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("uninstall left %s", dir)
	}
	sameFiles(t, "the user's files after uninstall", h.snapshot(), before)
}
