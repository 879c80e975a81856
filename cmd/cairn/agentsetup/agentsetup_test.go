package agentsetup_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/agentsetup"
)

func options(t *testing.T) agentsetup.Options {
	t.Helper()
	data := t.TempDir()
	return agentsetup.Options{Home: t.TempDir(), Binary: "/opt/cairn dir/cairn", DataDir: data, StateDir: filepath.Join(data, "setup")}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func setup(t *testing.T, agent string, o agentsetup.Options, uninstall bool) []agentsetup.Change {
	t.Helper()
	cs, err := agentsetup.Plan(agent, o, uninstall)
	if err != nil {
		t.Fatal(err)
	}
	if err := agentsetup.Apply(agent, o, cs, uninstall); err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestUninstallAfterOtherEdits: when the agent rewrote its settings after
// setup (new keys, its own formatting), uninstall removes cairn's entries
// only and keeps everything else.
func TestUninstallAfterOtherEdits(t *testing.T) {
	o := options(t)
	settings := filepath.Join(o.Home, ".claude", "settings.json")
	write(t, settings, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}}`)
	setup(t, agentsetup.ClaudeCode, o, false)
	got := read(t, settings)
	if !strings.Contains(got, `"command": "'/opt/cairn dir/cairn' hook claude-code --data-dir `) {
		t.Fatalf("the hook command does not quote the binary's path:\n%s", got)
	}
	write(t, settings, strings.Replace(got, `"hooks": {`, `"theme": "dark", "hooks": {`, 1))
	cs := setup(t, agentsetup.ClaudeCode, o, true)
	for _, c := range cs {
		if c.Path == settings && c.Exact {
			t.Error("an edited file was restored from the state")
		}
	}
	got = read(t, settings)
	if strings.Contains(got, "cairn") || !strings.Contains(got, `"theme": "dark"`) || !strings.Contains(got, `"notify"`) || strings.Contains(got, "SessionStart") {
		t.Errorf("after uninstall:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(o.Home, ".claude", "CLAUDE.md")); !os.IsNotExist(err) {
		t.Errorf("CLAUDE.md, created by setup, is still there: %v", err)
	}
}

// TestSetupRefusesWhatItCannotEditSafely: malformed files and tables in a
// form the text edit would not see are errors naming the file, and nothing
// is written.
func TestSetupRefusesWhatItCannotEditSafely(t *testing.T) {
	for _, tc := range []struct{ agent, rel, content, want string }{
		{agentsetup.ClaudeCode, ".claude.json", `{"mcpServers": `, "not valid JSON"},
		{agentsetup.ClaudeCode, ".claude.json", `{"mcpServers": []}`, "mcpServers is not an object"},
		{agentsetup.Codex, ".codex/config.toml", "[mcp_servers\n", "not valid TOML"},
		{agentsetup.Codex, ".codex/config.toml", "mcp_servers.cairn = { command = \"x\" }\n", "inline"},
		{"cursor", ".x", "", "unknown agent"},
	} {
		o := options(t)
		path := filepath.Join(o.Home, tc.rel)
		write(t, path, tc.content)
		_, err := agentsetup.Plan(tc.agent, o, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: err %v, want %q", tc.agent, tc.content, err, tc.want)
		}
		if got := read(t, path); got != tc.content {
			t.Errorf("%s was written", path)
		}
	}
}

// TestSetupMovesWithTheBinary: setting up again from another binary path
// replaces cairn's entries in place, and uninstall still restores the
// original bytes.
func TestSetupMovesWithTheBinary(t *testing.T) {
	o := options(t)
	cfg := filepath.Join(o.Home, ".codex", "config.toml")
	orig := "# mine\n[mcp_servers.cairn]\ncommand = \"old\"\n\n[other]\nx = 1\n"
	write(t, cfg, orig)
	setup(t, agentsetup.Codex, o, false)
	o.Binary = "/usr/local/bin/cairn"
	cs := setup(t, agentsetup.Codex, o, false)
	got := read(t, cfg)
	if strings.Count(got, "[mcp_servers.cairn]") != 1 || !strings.Contains(got, "command = '/usr/local/bin/cairn'") || !strings.HasSuffix(got, "[other]\nx = 1\n") {
		t.Errorf("after moving:\n%s", got)
	}
	if d := cs[0].Diff(); !strings.Contains(d, "-command = '/opt/cairn dir/cairn'") || !strings.Contains(d, "+command = '/usr/local/bin/cairn'") {
		t.Errorf("diff:\n%s", d)
	}
	setup(t, agentsetup.Codex, o, true)
	if got := read(t, cfg); got != orig {
		t.Errorf("uninstall: got\n%q\nwant\n%q", got, orig)
	}
}

// TestSetupFollowsSymlinks: a settings file kept in a dotfiles repository
// and linked into place is edited where it lives; the link stays.
func TestSetupFollowsSymlinks(t *testing.T) {
	o := options(t)
	target := filepath.Join(t.TempDir(), "dotfiles", "gemini-settings.json")
	write(t, target, "{}\n")
	link := filepath.Join(o.Home, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	setup(t, agentsetup.Gemini, o, false)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if !strings.Contains(read(t, target), `"cairn-recall"`) {
		t.Errorf("target not edited:\n%s", read(t, target))
	}
	setup(t, agentsetup.Gemini, o, true)
	if got := read(t, target); got != "{}\n" {
		t.Errorf("after uninstall: %q", got)
	}
}
