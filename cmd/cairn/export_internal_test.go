package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportMessagesCLI: on a store with messages and no sessions,
// `export --all` writes each channel's JSONL and Markdown and lists them;
// the JSONL imports into another store; on an empty store it says there
// is nothing to export.
func TestExportMessagesCLI(t *testing.T) {
	data := t.TempDir()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data})
	cli := cliExpect(t, getenv)
	if out := cli(0, "export", "--all", "--out", filepath.Join(t.TempDir(), "x")); !strings.Contains(out, "nothing to export") {
		t.Errorf("empty store: %q", out)
	}
	cli(0, "channels", "create", "team-log", "--description", "what we shipped")
	cli(0, "post", "--channel", "team-log", "--sender", "bob", "--type", "decision", "deployed v1.2")
	cli(0, "note", "--agent", "claude", "SQLite WAL needs busy_timeout")
	out := filepath.Join(t.TempDir(), "export")
	listing := cli(0, "export", "--all", "--out", out)
	for _, f := range []string{"team-log.jsonl", "team-log.md", "agent-notes%3Aclaude.jsonl", "agent-notes%3Aclaude.md"} {
		if _, err := os.Stat(filepath.Join(out, "messages", f)); err != nil || !strings.Contains(listing, f) {
			t.Errorf("%s: %v; listing:\n%s", f, err, listing)
		}
	}
	other := envMap(map[string]string{"CAIRN_DATA_DIR": t.TempDir()})
	if o, e, code := runCLI(t, other, "", "import", "messages", "--no-embed", filepath.Join(out, "messages", "team-log.jsonl")); code != 0 || !strings.Contains(o, "1 imported") {
		t.Fatalf("import: %d %s %s", code, o, e)
	}
	if o, _, _ := runCLI(t, other, "", "channels", "--json"); !strings.Contains(o, `"description":"what we shipped"`) {
		t.Errorf("channel description not imported: %s", o)
	}
	if o, _, _ := runCLI(t, other, "", "search", "--json", "deployed"); !strings.Contains(o, `"message_type":"decision"`) {
		t.Errorf("type not imported: %s", o)
	}
}

// TestExportImportCorrectionsCLI: a correction exported by `cairn export`
// imports with its link (`links_restored` in the --json report, the
// replaced message out of search); imported before the message it replaces,
// it is stored, its line is named on stderr and the exit code is 0.
func TestExportImportCorrectionsCLI(t *testing.T) {
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": t.TempDir(), "CAIRN_MODEL": "none"})
	cli := cliExpect(t, getenv)
	cli(0, "post", "--channel", "team-log", "--sender", "bob", "the release window is Tuesday")
	cli(0, "note", "--agent", "claude", "--supersedes", "1", "the release window moved to Wednesday")
	out := filepath.Join(t.TempDir(), "export")
	cli(0, "export", "--messages", "--format", "jsonl", "--out", out)
	log, notes := filepath.Join(out, "messages", "team-log.jsonl"), filepath.Join(out, "messages", "agent-notes%3Aclaude.jsonl")

	other := cliExpect(t, envMap(map[string]string{"CAIRN_DATA_DIR": t.TempDir(), "CAIRN_MODEL": "none"}))
	other(0, "import", "messages", "--no-embed", log)
	if o := other(0, "--json", "import", "messages", "--no-embed", notes); !strings.Contains(o, `"links_restored":1`) || !strings.Contains(o, `"links_dropped":0`) {
		t.Errorf("import of the correction: %s", o)
	}
	if o := other(0, "search", "--json", "--mode", "keyword", "release window"); strings.Contains(o, "Tuesday") || !strings.Contains(o, "Wednesday") {
		t.Errorf("search after the import: %s", o)
	}

	early := cliExpect(t, envMap(map[string]string{"CAIRN_DATA_DIR": t.TempDir(), "CAIRN_MODEL": "none"}))
	if o := early(0, "import", "messages", "--no-embed", notes); !strings.Contains(o, notes+":2: supersedes link dropped") || !strings.Contains(o, "1 supersedes links dropped") {
		t.Errorf("correction imported first: %s", o)
	}
}

// TestContinuousExportCLI: with export.continuous, a `cairn post` updates
// the channel's export files (not only `cairn serve`).
func TestContinuousExportCLI(t *testing.T) {
	data := t.TempDir()
	exp := filepath.Join(t.TempDir(), "exp")
	os.WriteFile(filepath.Join(data, "config.toml"), []byte("[export]\ncontinuous = true\ndir = \""+filepath.ToSlash(exp)+"\"\n"), 0o644)
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data})
	if o, e, code := runCLI(t, getenv, "", "note", "--agent", "ann", "first note"); code != 0 {
		t.Fatalf("note: %d %s %s", code, o, e)
	}
	if o, e, code := runCLI(t, getenv, "", "note", "--agent", "ann", "second note"); code != 0 {
		t.Fatalf("note: %d %s %s", code, o, e)
	}
	b, err := os.ReadFile(filepath.Join(exp, "messages", "agent-notes%3Aann.jsonl"))
	if err != nil || !strings.Contains(string(b), "first note") || !strings.Contains(string(b), "second note") {
		t.Errorf("continuous export after two notes: %v\n%s", err, b)
	}
	ents, _ := os.ReadDir(filepath.Join(exp, "messages"))
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

// cliExpect returns a runner of the CLI that fails the test when the exit
// code is not the wanted one, and returns stdout and stderr together.
func cliExpect(t *testing.T, getenv func(string) string) func(want int, args ...string) string {
	return func(want int, args ...string) string {
		t.Helper()
		out, errOut, code := runCLI(t, getenv, "", args...)
		if code != want {
			t.Fatalf("cairn %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, errOut)
		}
		return out + errOut
	}
}
