package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/pgtest"
)

// The operations beyond messages and search work from the CLI on a
// PostgreSQL store: channels with descriptions, imports, stats, check,
// exports, unread cursors, gc and purge; a backup and the Claude Code
// import are refused with what to do instead.
func TestOperationsOnPostgresCLI(t *testing.T) {
	dsn := pgtest.Database(t)
	data := t.TempDir()
	env := envMap(map[string]string{"CAIRN_DATA_DIR": data, "CAIRN_MODEL": "none", "CAIRN_STORE": dsn})
	cli := func(want int, args ...string) string {
		t.Helper()
		out, errOut, code := runCLI(t, env, "", args...)
		if code != want {
			t.Fatalf("cairn %s: exit %d (want %d)\n%s%s", strings.Join(args, " "), code, want, out, errOut)
		}
		return out + errOut
	}
	cli(0, "channels", "create", "plans", "--name", "Plans", "--description", "what comes next", "--project", "cairn")
	if out := cli(2, "channels", "create", "plans"); !strings.Contains(out, "exists") {
		t.Fatalf("second create: %s", out)
	}
	lines := `{"kind": "channel", "id": "design", "description": "how it is built"}
{"channel": "design", "sender": "alice", "content": "operations are optional capabilities of a backend"}
{"channel": "plans", "sender": "bob", "content": "next: sessions on PostgreSQL"}
{"channel": "general", "sender": "bob", "content": "the build cache is invalidated when go.mod changes", "created_at": "2020-01-01T00:00:00Z"}
`
	file := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := cli(0, "import", "messages", file, "--json"); !strings.Contains(out, `"imported":3`) {
		t.Fatalf("import: %s", out)
	}
	var st struct {
		Messages  int64                 `json:"messages"`
		ByChannel map[string]int64      `json:"by_channel"`
		Bytes     struct{ Total int64 } `json:"bytes"`
	}
	if err := json.Unmarshal([]byte(cli(0, "stats", "--json")), &st); err != nil || st.Messages != 3 || st.ByChannel["design"] != 1 || st.Bytes.Total <= 0 {
		t.Fatalf("stats %+v (%v)", st, err)
	}
	if out := cli(0, "check"); !strings.Contains(out, "messages      3") || !strings.HasSuffix(strings.TrimSpace(out), "ok") {
		t.Fatalf("check: %s", out)
	}
	exp := t.TempDir()
	cli(0, "export", "--all", "--out", exp)
	got, err := os.ReadFile(filepath.Join(exp, "messages", "design.jsonl"))
	if err != nil || !strings.Contains(string(got), `"description":"how it is built"`) || !strings.Contains(string(got), "optional capabilities") {
		t.Fatalf("export: %s (%v)", got, err)
	}
	if out := cli(0, "unread", "--agent", "carol", "--mark", "--json"); !strings.Contains(out, `"unread":3`) {
		t.Fatalf("unread: %s", out)
	}
	if out := cli(0, "unread", "--agent", "carol", "--json"); !strings.Contains(out, `"unread":0`) {
		t.Fatalf("unread after mark: %s", out)
	}
	if err := os.WriteFile(filepath.Join(data, "config.toml"), []byte("[[retention.policy]]\nname = \"old\"\nmax_age = \"365d\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := cli(0, "gc", "--json"); !strings.Contains(out, "older than max_age") {
		t.Fatalf("gc: %s", out)
	}
	if out := cli(0, "purge", "--channel", "plans", "--yes", "--json"); !strings.Contains(out, `"messages":1`) {
		t.Fatalf("purge: %s", out)
	}
	cli(0, "check")
	if out := cli(2, "backup", filepath.Join(t.TempDir(), "b.tar")); !strings.Contains(out, "pg_dump") {
		t.Fatalf("backup: %s", out)
	}
	if out := cli(2, "import", "claude-code", t.TempDir()); !strings.Contains(out, "PostgreSQL") {
		t.Fatalf("claude-code import: %s", out)
	}
}
