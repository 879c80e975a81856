package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine/claudecode/ccfixture"
)

// TestLifecycleCLI drives import, sessions, export, stats, gc, backup,
// restore and config through the command table, as a user would.
func TestLifecycleCLI(t *testing.T) {
	tree, err := ccfixture.Write(t.TempDir(), ccfixture.Options{Rand: rand.New(rand.NewPCG(4, 4)), Compact: true, Branch: true, Sidechain: true,
		Secret: "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a", SharedInstruction: "Run make test before committing."})
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data, "HOME": t.TempDir()})
	cli := cliExpect(t, getenv)

	var rep struct {
		Added      int            `json:"added"`
		Redactions map[string]int `json:"redactions"`
	}
	if err := json.Unmarshal([]byte(cli(0, "import", "claude-code", tree.Root, "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Added != tree.Records() || rep.Redactions["github-pat"] == 0 {
		t.Fatalf("import: %+v, want %d records and a redaction", rep, tree.Records())
	}
	if out := cli(0, "import", "claude-code", tree.Root); !strings.Contains(out, "0 records added") {
		t.Errorf("re-import: %s", out)
	}
	cli(2, "import", "nope")
	cli(2, "import")

	if n := len(lines(cli(0, "sessions", "--json"))); n != len(tree.Sessions) {
		t.Errorf("sessions: %d lines, want %d", n, len(tree.Sessions))
	}
	sid := tree.Sessions[0].ID
	if out := cli(0, "sessions", sid); !strings.Contains(out, "#1 ") {
		t.Errorf("sessions ID: %s", out)
	}

	var hit struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal([]byte(lines(cli(0, "search", "--channel", "claude-code", "--json", "make test before committing"))[0]), &hit); err != nil {
		t.Fatal(err)
	}
	if refs := lines(cli(0, "sessions", "--hit", fmt.Sprint(hit.ID))); len(refs) != len(tree.Sessions) {
		t.Errorf("hit %d is in %d session records, want %d", hit.ID, len(refs), len(tree.Sessions))
	}

	out := filepath.Join(t.TempDir(), "export")
	cli(0, "export", "--all", "--out", out, "--format", "jsonl")
	if ents, _ := os.ReadDir(out); len(ents) != len(tree.Sessions)+1 { // and the messages folder
		t.Errorf("export wrote %d files", len(ents))
	}
	cli(0, "export", "--session", sid, "--out", out, "--format", "md")
	if b, err := os.ReadFile(filepath.Join(out, sid+".md")); err != nil || !strings.Contains(string(b), "# Session "+sid) {
		t.Errorf("markdown: %v", err)
	}
	cli(2, "export", "--session", "../../etc/passwd", "--out", out)
	cli(2, "export", "--out", out)

	var st struct {
		Messages int64 `json:"messages"`
		Sessions struct {
			Sessions int64 `json:"sessions"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(cli(0, "stats", "--json")), &st); err != nil || st.Sessions.Sessions != int64(len(tree.Sessions)) || st.Messages == 0 {
		t.Errorf("stats: %+v %v", st, err)
	}
	if s := cli(0, "stats"); !strings.Contains(s, "bytes on disk") || !strings.Contains(s, "per message") || !strings.Contains(s, "x the messages table") {
		t.Errorf("stats text: %s", s)
	}

	archive := filepath.Join(t.TempDir(), "b.cairn.zst")
	cli(0, "backup", archive)
	cli(0, "restore", "--verify-only", archive)
	restored := filepath.Join(t.TempDir(), "r")
	cli(0, "restore", archive, restored)
	cli(2, "restore", archive, restored) // not empty
	if s := cli(0, "--data-dir", restored, "sessions"); len(lines(s)) != len(tree.Sessions) {
		t.Errorf("restored sessions: %s", s)
	}

	// Sessions from January 2026 are older than 1 day now.
	if s := cli(0, "gc", "--dry-run", "--session-max-age", "1d"); !strings.Contains(s, "would delete") {
		t.Errorf("gc dry run: %s", s)
	}
	var gc struct {
		Sessions []struct{ ID string } `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(cli(0, "gc", "--session-max-age", "1d", "--json")), &gc); err != nil || len(gc.Sessions) != len(tree.Sessions) {
		t.Errorf("gc: %+v %v", gc, err)
	}
	if s := cli(0, "sessions"); !strings.Contains(s, "no sessions") {
		t.Errorf("after gc: %s", s)
	}
	cli(2, "gc", "--session-max-age", "soon")

	if s := cli(0, "config", "show"); !strings.Contains(s, "[retention]") || !strings.Contains(s, "session_max_age") {
		t.Errorf("config show: %s", s)
	}
	if s := cli(0, "config", "show", "--defaults"); !strings.Contains(s, "enabled = true") {
		t.Errorf("config defaults: %s", s)
	}
	if s := cli(0, "config", "env"); !strings.Contains(s, "CAIRN_RETENTION_SESSION_MAX_AGE=") {
		t.Errorf("config env: %s", s)
	}
	os.WriteFile(filepath.Join(data, "config.toml"), []byte("[retention]\nsesion_max_age = \"1d\"\n"), 0o644)
	if s := cli(2, "gc", "--dry-run"); !strings.Contains(s, "sesion_max_age") {
		t.Errorf("bad config: %s", s)
	}
	os.WriteFile(filepath.Join(data, "config.toml"), []byte("[[retention.policy]]\nname = \"chunks\"\ntypes = [\"session\"]\nmax_age = \"1d\"\n"), 0o644)
	cli(0, "gc", "--dry-run")
}

func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			out = append(out, sc.Text())
		}
	}
	return out
}

func TestNoteIsRedacted(t *testing.T) {
	data := t.TempDir()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data})
	secret := "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	if _, errOut, code := runCLI(t, getenv, "", "note", "--agent", "a", "slack token "+secret); code != 0 {
		t.Fatalf("note: %d %s", code, errOut)
	}
	out, _, code := runCLI(t, getenv, "", "show", "1")
	if code != 0 || strings.Contains(out, secret) || !strings.Contains(out, "[REDACTED:slack-bot-token]") {
		t.Errorf("show: %d %s", code, out)
	}
	// Redaction can be turned off in the environment.
	getenv = envMap(map[string]string{"CAIRN_DATA_DIR": data, "CAIRN_REDACTION_ENABLED": "false"})
	runCLI(t, getenv, "", "note", "--agent", "a", "raw "+secret)
	out, _, _ = runCLI(t, getenv, "", "show", "2")
	if !strings.Contains(out, secret) {
		t.Errorf("redaction off: %s", out)
	}
}
