package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine/claudecode/ccfixture"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pelletier/go-toml/v2"
)

// agentHome is a fake HOME with the agents' files already holding the
// user's own settings, and the data dir the test's cairn uses.
type agentHome struct {
	t          *testing.T
	bin        string
	home, data string
}

func newAgentHome(t *testing.T, bin string) *agentHome {
	t.Helper()
	h := &agentHome{t: t, bin: bin, home: t.TempDir(), data: filepath.Join(t.TempDir(), "data")}
	h.write(".claude.json", `{
  "numStartups": 12,
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {}
    }
  },
  "projects": {"/work/x": {"allowedTools": [], "history": [{"display": "hi <b>&</b>"}]}},
  "tipsHistory": {"memory": 3}
}
`)
	h.write(".claude/settings.json", `{
  "model": "opus",
  "permissions": {"allow": ["Bash(go test:*)"]},
  "hooks": {
    "SessionStart": [
      {"matcher": "startup", "hooks": [{"type": "command", "command": "echo mine"}]}
    ],
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}
    ]
  }
}
`)
	h.write(".claude/CLAUDE.md", "# My rules\n\nAlways run the tests.\n")
	h.write(".codex/config.toml", "model = \"o3\" # mine\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\nargs = [\"--stdio\"]\n\n[profiles.fast]\nmodel = \"o4-mini\"\n")
	h.write(".gemini/settings.json", "{\n    \"theme\": \"GitHub\",\n    \"mcpServers\": {}\n}\n")
	return h
}

func (h *agentHome) path(rel string) string { return filepath.Join(h.home, filepath.FromSlash(rel)) }

func (h *agentHome) write(rel, content string) {
	h.t.Helper()
	p := h.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

// snapshot returns every file below home (the data dir is elsewhere).
func (h *agentHome) snapshot() map[string]string {
	h.t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(h.home, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

func (h *agentHome) env() []string {
	return append(os.Environ(), "HOME="+h.home, "CAIRN_DATA_DIR="+h.data, "CLAUDE_CONFIG_DIR=", "CODEX_HOME=", "CAIRN_CONFIG=")
}

// cairn runs the binary and returns stdout; it fails the test on a
// non-zero exit.
func (h *agentHome) cairn(args ...string) string {
	h.t.Helper()
	cmd := exec.Command(h.bin, args...)
	cmd.Env = h.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		h.t.Fatalf("cairn %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// runHook runs a hook command line as the agent does (through the shell,
// the hook input on stdin, in the session's working directory) and returns
// stdout, stderr and the exit code.
func (h *agentHome) runHook(command, dir string, input map[string]any) (string, string, int) {
	h.t.Helper()
	in, _ := json.Marshal(input)
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+h.home, "CLAUDE_PROJECT_DIR="+dir)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if x, ok := err.(*exec.ExitError); ok {
		code = x.ExitCode()
	} else if err != nil {
		h.t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// hookCommands returns the commands of event's hooks that run cairn.
func hookCommands(t *testing.T, settings map[string]any, event string) []string {
	t.Helper()
	hooks, _ := settings["hooks"].(map[string]any)
	groups, _ := hooks[event].([]any)
	var out []string
	for _, g := range groups {
		for _, hk := range g.(map[string]any)["hooks"].([]any) {
			if c := hk.(map[string]any)["command"].(string); strings.Contains(c, " hook ") {
				out = append(out, c)
			}
		}
	}
	return out
}

func sameFiles(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("%s: %s is gone", what, p)
		} else if g != w {
			t.Errorf("%s: %s differs:\n got: %q\nwant: %q", what, p, g, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s was left behind", what, p)
		}
	}
}

// TestSetupAgentsForReal runs `cairn setup` as a process on a fake HOME
// whose agent files hold other settings, then uses what it installed the
// way the agents do: the hooks from the settings file through the shell
// with Claude Code's stdin JSON, the MCP server from the registered
// command line with the official Go SDK client. Uninstall gives back the
// files byte for byte.
func TestSetupAgentsForReal(t *testing.T) {
	bin := buildCairn(t)
	if resolved, err := filepath.EvalSymlinks(bin); err == nil {
		bin = resolved
	}
	h := newAgentHome(t, bin)
	before := h.snapshot()

	// --dry-run shows every file and its diff and writes nothing.
	out := h.cairn("setup", "claude-code", "--dry-run")
	for _, f := range []string{".claude.json", ".claude/settings.json", ".claude/CLAUDE.md"} {
		if !strings.Contains(out, "would change  "+h.path(f)) {
			t.Errorf("dry run does not list %s:\n%s", f, out)
		}
	}
	if !strings.Contains(out, `+    "cairn": {`) || !strings.Contains(out, "+<!-- cairn:begin") || !strings.Contains(out, `"PreCompact"`) {
		t.Errorf("dry run shows no diff:\n%s", out)
	}
	sameFiles(t, "after --dry-run", h.snapshot(), before)

	h.cairn("setup", "claude-code")
	installed := h.snapshot()
	if out := h.cairn("setup", "claude-code"); !strings.Contains(out, "already set up") {
		t.Errorf("second setup:\n%s", out)
	}
	sameFiles(t, "second setup", h.snapshot(), installed)

	state := readJSON(t, h.path(".claude.json"))
	servers := state["mcpServers"].(map[string]any)
	if _, ok := servers["github"]; !ok || state["numStartups"] != 12.0 || state["projects"] == nil {
		t.Errorf("other keys of ~/.claude.json lost: %v", state)
	}
	server := servers["cairn"].(map[string]any)
	if server["command"] != bin || server["type"] != "stdio" {
		t.Errorf("registered server %v, want command %s", server, bin)
	}
	if !strings.Contains(installed[h.path(".claude.json")], `"hi <b>&</b>"`) {
		t.Error("strings were re-escaped")
	}
	settings := readJSON(t, h.path(".claude/settings.json"))
	if settings["model"] != "opus" || hookCommands(t, settings, "PreToolUse") != nil {
		t.Errorf("other settings lost: %v", settings)
	}
	start, end, compact := hookCommands(t, settings, "SessionStart"), hookCommands(t, settings, "SessionEnd"), hookCommands(t, settings, "PreCompact")
	if len(start) != 1 || len(end) != 1 || len(compact) != 1 {
		t.Fatalf("hooks: start %v end %v compact %v", start, end, compact)
	}
	if !strings.Contains(installed[h.path(".claude/settings.json")], `"command": "echo mine"`) {
		t.Error("the user's own SessionStart hook is gone")
	}

	// The project the session works in, with notes about it.
	proj := filepath.Join(t.TempDir(), "shop")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(proj, "billing"), 0o700); err != nil {
		t.Fatal(err)
	}
	h.cairn("note", "--agent", "claude", "--project", "shop", "--type", "decision", "--confidence", "0.9", "Invoices are immutable; corrections are credit notes")
	h.cairn("note", "--agent", "claude", "--project", "shop", "--type", "policy", "Never log card numbers")
	h.cairn("note", "--agent", "claude", "--project", "other", "--type", "decision", "Unrelated project decision")

	t.Run("recall", func(t *testing.T) {
		stdout, stderr, code := h.runHook(start[0], filepath.Join(proj, "billing"), map[string]any{
			"session_id": "9c1f3f4e-0b7a-4d53-9d1a-6f1c2a3b4c5d", "transcript_path": filepath.Join(h.home, ".claude/projects/-shop/9c1f3f4e-0b7a-4d53-9d1a-6f1c2a3b4c5d.jsonl"),
			"cwd": filepath.Join(proj, "billing"), "hook_event_name": "SessionStart", "source": "startup", "permission_mode": "default"})
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		ctx := hookContext(t, stdout, "SessionStart")
		if !strings.Contains(ctx, "Invoices are immutable") || !strings.Contains(ctx, "Never log card numbers") {
			t.Errorf("recall:\n%s", ctx)
		}
		if strings.Contains(ctx, "Unrelated") {
			t.Errorf("recall lists another project's record:\n%s", ctx)
		}
		if strings.Index(ctx, "Policies:") > strings.Index(ctx, "Decisions:") {
			t.Errorf("sections out of order:\n%s", ctx)
		}
	})

	t.Run("capture", func(t *testing.T) {
		sid := "4b2e8f1a-3c6d-4e9f-8a7b-1c2d3e4f5a6b"
		transcript := filepath.Join(h.home, ".claude", "projects", "-shop", sid+".jsonl")
		if err := os.MkdirAll(filepath.Dir(transcript), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ccfixture.WriteSession(transcript, rand.New(rand.NewPCG(7, 7)), 4); err != nil {
			t.Fatal(err)
		}
		in := map[string]any{"session_id": sid, "transcript_path": transcript, "cwd": proj, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}
		sessions := func() int { return strings.Count(h.cairn("sessions", "--json"), "\n") }

		// Capture is off until config.toml turns a trigger on.
		if _, stderr, code := h.runHook(end[0], proj, in); code != 0 || stderr != "" || sessions() != 0 {
			t.Fatalf("capture while off: exit %d, %q, %d sessions", code, stderr, sessions())
		}
		if err := os.WriteFile(filepath.Join(h.data, "config.toml"), []byte("[capture]\nsession_end = true\n\n[import]\nexclude = [\"-secret*\"]\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		compactIn := map[string]any{"session_id": sid, "transcript_path": transcript, "cwd": proj, "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}
		if _, _, code := h.runHook(compact[0], proj, compactIn); code != 0 || sessions() != 0 {
			t.Fatalf("pre_compact is off but the session was imported")
		}
		for i := 0; i < 2; i++ { // idempotent
			if stdout, stderr, code := h.runHook(end[0], proj, in); code != 0 || stderr != "" || !strings.Contains(stdout, "records added") {
				t.Fatalf("capture: exit %d\n%s\n%s", code, stdout, stderr)
			}
		}
		if n := sessions(); n != 1 {
			t.Fatalf("%d sessions after capture, want 1", n)
		}

		// Excluded sessions are never stored.
		secret := filepath.Join(h.home, ".claude", "projects", "-secret-work", "0d9e8f7a-6b5c-4d3e-2f1a-0b9c8d7e6f5a.jsonl")
		if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ccfixture.WriteSession(secret, rand.New(rand.NewPCG(8, 8)), 2); err != nil {
			t.Fatal(err)
		}
		if _, _, code := h.runHook(end[0], proj, map[string]any{"session_id": "0d9e8f7a-6b5c-4d3e-2f1a-0b9c8d7e6f5a", "transcript_path": secret, "cwd": proj, "hook_event_name": "SessionEnd", "reason": "other"}); code != 0 || sessions() != 1 {
			t.Fatalf("excluded session stored (exit %d, %d sessions)", code, sessions())
		}

		// A failure inside the hook is reported on stderr and exits 0.
		_, stderr, code := h.runHook(end[0], proj, map[string]any{"session_id": sid, "transcript_path": filepath.Join(h.home, "gone.jsonl"), "cwd": proj, "hook_event_name": "SessionEnd"})
		if code != 0 || !strings.Contains(stderr, "cairn hook:") {
			t.Errorf("failing capture: exit %d, stderr %q", code, stderr)
		}
		if _, stderr, code := h.runHook(end[0], proj, map[string]any{"hook_event_name": 7}); code != 0 || !strings.Contains(stderr, "cairn hook:") {
			t.Errorf("bad input: exit %d, stderr %q", code, stderr)
		}

		// The records belong to the agent and the person, dated by the transcript.
		var senders []string
		for _, line := range strings.Split(strings.TrimSpace(h.cairn("agents", "--json")), "\n") {
			var a struct {
				Name       string    `json:"name"`
				LastActive time.Time `json:"last_active"`
			}
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				t.Fatal(err)
			}
			senders = append(senders, a.Name)
			if (a.Name == "claude-code" || a.Name == "human") && (a.LastActive.Before(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) || a.LastActive.After(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))) {
				t.Errorf("%s last active %s, want the transcript's time (January 2026)", a.Name, a.LastActive)
			}
		}
		joined := strings.Join(senders, ",")
		if !strings.Contains(joined, "claude-code") || !strings.Contains(joined, "human") || strings.Contains(joined, "assistant") || strings.Contains(joined, "user") {
			t.Errorf("agents %v: want claude-code and human, no user/assistant", senders)
		}
	})

	t.Run("mcp from the registered command line", func(t *testing.T) {
		args := []string{}
		for _, a := range server["args"].([]any) {
			args = append(args, a.(string))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a hang guard: generous on a loaded machine
		defer cancel()
		cmd := exec.Command(server["command"].(string), args...)
		cmd.Env = append(os.Environ(), "HOME="+h.home)
		client := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "test"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_messages", Arguments: map[string]any{"query": "credit notes", "mode": "keyword"}})
		if err != nil || res.IsError {
			t.Fatalf("search_messages: %v %+v", err, res)
		}
		b, _ := json.Marshal(res.StructuredContent)
		if !strings.Contains(string(b), "Invoices are immutable") {
			t.Errorf("the registered server does not see the data dir's notes: %s", b)
		}
	})

	h.cairn("setup", "claude-code", "--uninstall")
	if err := os.RemoveAll(h.path(".claude/projects")); err != nil { // the transcripts the test wrote
		t.Fatal(err)
	}
	sameFiles(t, "after uninstall", h.snapshot(), before)
}

// TestSetupCodexAndGemini sets up Codex and Gemini CLI on a fake HOME:
// Codex's TOML keeps every other table, Gemini's recall hook answers as the
// agent runs it, and uninstall restores the files exactly, or removes only
// cairn's entries when the user changed the file since.
func TestSetupCodexAndGemini(t *testing.T) {
	bin := buildCairn(t)
	h := newAgentHome(t, bin)
	before := h.snapshot()
	h.cairn("setup", "codex")
	h.cairn("setup", "gemini")
	installed := h.snapshot()
	h.cairn("setup", "codex")
	h.cairn("setup", "gemini")
	sameFiles(t, "second setup", h.snapshot(), installed)

	var codex struct {
		Model      string `toml:"model"`
		MCPServers map[string]struct {
			Command string   `toml:"command"`
			Args    []string `toml:"args"`
		} `toml:"mcp_servers"`
		Profiles map[string]any `toml:"profiles"`
	}
	if err := toml.Unmarshal([]byte(installed[h.path(".codex/config.toml")]), &codex); err != nil {
		t.Fatal(err)
	}
	if codex.Model != "o3" || codex.MCPServers["docs"].Command != "docs-mcp" || codex.Profiles["fast"] == nil {
		t.Errorf("codex config lost the user's settings: %+v", codex)
	}
	if s := codex.MCPServers["cairn"]; !strings.HasSuffix(s.Command, "cairn") || strings.Join(s.Args, " ") != "mcp --data-dir "+h.data {
		t.Errorf("codex server: %+v", s)
	}
	if !strings.Contains(installed[h.path(".codex/AGENTS.md")], "<!-- cairn:end -->") {
		t.Error("no AGENTS.md instruction")
	}

	gemini := readJSON(t, h.path(".gemini/settings.json"))
	if gemini["theme"] != "GitHub" || gemini["mcpServers"].(map[string]any)["cairn"] == nil {
		t.Errorf("gemini settings: %v", gemini)
	}
	start := hookCommands(t, gemini, "SessionStart")
	if len(start) != 1 {
		t.Fatalf("gemini hooks: %v", gemini["hooks"])
	}
	dir := filepath.Join(t.TempDir(), "lab")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	h.cairn("note", "--agent", "gemini", "--project", "lab", "--type", "pattern", "Seed every random generator from the test flag")
	stdout, stderr, code := h.runHook(start[0], dir, map[string]any{"session_id": "s1", "transcript_path": "", "cwd": dir, "hook_event_name": "SessionStart", "source": "startup", "timestamp": "2026-11-24T02:00:00Z"})
	if code != 0 || !strings.Contains(stdout, "Seed every random generator") || !json.Valid([]byte(stdout)) {
		t.Errorf("gemini recall: exit %d\n%s\n%s", code, stdout, stderr)
	}

	codexStart := hookCommands(t, readJSON(t, h.path(".codex/hooks.json")), "SessionStart")
	if len(codexStart) != 1 {
		t.Fatalf("codex hooks: %v", codexStart)
	}
	stdout, stderr, code = h.runHook(codexStart[0], dir, map[string]any{"session_id": "s2", "transcript_path": nil, "cwd": dir, "hook_event_name": "SessionStart", "source": "startup", "model": "gpt-5"})
	if code != 0 || !strings.Contains(stdout, "Seed every random generator") {
		t.Errorf("codex recall: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// The per-prompt hooks: Gemini CLI's BeforeAgent, Codex's UserPromptSubmit.
	for _, c := range []struct{ command, event string }{
		{hookCommands(t, gemini, "BeforeAgent")[0], "BeforeAgent"},
		{hookCommands(t, readJSON(t, h.path(".codex/hooks.json")), "UserPromptSubmit")[0], "UserPromptSubmit"},
	} {
		stdout, stderr, code = h.runHook(c.command, dir, map[string]any{"session_id": "p-" + c.event, "cwd": dir, "hook_event_name": c.event, "prompt": "How should tests seed the random generator?"})
		if ctx := hookContext(t, stdout, c.event); code != 0 || !strings.Contains(ctx, "Seed every random generator") {
			t.Errorf("%s recall: exit %d\n%s\n%s", c.event, code, stdout, stderr)
		}
	}

	// The user edits config.toml after setup: uninstall removes only cairn's table.
	edited := installed[h.path(".codex/config.toml")]
	edited = strings.Replace(edited, "model = \"o3\" # mine", "model = \"o3\" # mine\napproval_policy = \"never\"", 1)
	h.write(".codex/config.toml", edited)
	h.cairn("setup", "codex", "--uninstall")
	h.cairn("setup", "gemini", "--uninstall")
	after := h.snapshot()
	want := strings.Replace(before[h.path(".codex/config.toml")], "# mine", "# mine\napproval_policy = \"never\"", 1)
	if got := after[h.path(".codex/config.toml")]; got != want {
		t.Errorf("codex config after uninstall:\n%s\nwant:\n%s", got, want)
	}
	after[h.path(".codex/config.toml")] = before[h.path(".codex/config.toml")]
	sameFiles(t, "after uninstall", after, before)
}
