package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine/claudecode/ccfixture"
)

// TestDeleteAndPurgeCLI: delete and purge show what would go and delete
// nothing without --yes (exit 2), delete with it; purge covers a channel,
// an agent and a session.
func TestDeleteAndPurgeCLI(t *testing.T) {
	data := t.TempDir()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data, "HOME": t.TempDir()})
	cli := cliExpect(t, getenv)
	cli(0, "channels", "create", "team-log")
	cli(0, "post", "--channel", "team-log", "--sender", "bob", "zebracorn deployed")
	cli(0, "post", "--channel", "team-log", "--sender", "ann", "second zebracorn")
	cli(0, "note", "--agent", "old-bot", "stale advice about zebracorn")

	if out := cli(2, "delete", "1"); !strings.Contains(out, "would delete message 1") || !strings.Contains(out, "--yes") {
		t.Errorf("delete without --yes: %s", out)
	}
	cli(0, "show", "1")
	cli(0, "delete", "1", "--yes")
	cli(2, "show", "1")
	cli(2, "delete", "1", "--yes") // not found
	cli(2, "delete", "x")

	cli(2, "purge", "--agent", "old-bot")                            // neither --dry-run nor --yes
	cli(2, "purge", "--agent", "old-bot", "--channel", "x", "--yes") // two selectors
	cli(2, "purge", "--agent", "nobody", "--yes")
	if out := cli(0, "purge", "--agent", "old-bot", "--dry-run"); !strings.Contains(out, "would delete 1 messages") {
		t.Errorf("purge dry run: %s", out)
	}
	cli(0, "purge", "--agent", "old-bot", "--yes")
	var rep struct {
		Messages int      `json:"messages"`
		Channels []string `json:"channels"`
	}
	if err := json.Unmarshal([]byte(cli(0, "purge", "--channel", "team-log", "--yes", "--json")), &rep); err != nil || rep.Messages != 1 || len(rep.Channels) != 1 {
		t.Errorf("purge channel: %+v %v", rep, err)
	}
	if out := cli(0, "search", "zebracorn"); strings.Contains(out, "zebracorn") {
		t.Errorf("purged text still found: %s", out)
	}
	cli(2, "channels", "show", "team-log")

	// The first session of each project has an old-style sub-agent file
	// (agent-{agentId}.jsonl beside the session's), linked to it only by
	// the records inside.
	tree, err := ccfixture.Write(t.TempDir(), ccfixture.Options{Rand: rand.New(rand.NewPCG(5, 5)), Sidechain: true})
	if err != nil {
		t.Fatal(err)
	}
	cli(0, "import", "claude-code", tree.Root)
	purged, kept := tree.Sessions[0], tree.Sessions[len(tree.Sessions)-2]
	if len(purged.Paths) != 2 || len(kept.Paths) != 2 {
		t.Fatalf("fixture: want a sub-agent file beside the purged and the kept session: %v, %v", purged.Paths, kept.Paths)
	}
	cli(0, "purge", "--session", purged.ID, "--yes")
	if out := cli(0, "sessions"); strings.Contains(out, purged.ID) {
		t.Errorf("purged session still listed: %s", out)
	}
	// Nor are its transcripts' paths kept (where an import resumes): no
	// file of the data dir holds them after the purge and a gc.
	cli(0, "gc")
	for _, p := range purged.Paths {
		if hits := markerHits(t, data, filepath.Base(p)); len(hits) > 0 {
			t.Errorf("the purged session's file path %s is still in %v", filepath.Base(p), hits)
		}
	}
	for _, p := range kept.Paths {
		if hits := markerHits(t, data, filepath.Base(p)); len(hits) == 0 {
			t.Errorf("another session's file path %s is gone too", filepath.Base(p))
		}
	}
}

// TestGCExcludedSessionAndQuota: a session excluded after it was imported
// goes on the next gc; with a size quota, gc deletes the oldest sessions
// and messages until the data dir fits.
func TestGCExcludedSessionAndQuota(t *testing.T) {
	data := t.TempDir()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data, "HOME": t.TempDir()})
	tree, err := ccfixture.Write(t.TempDir(), ccfixture.Options{Rand: rand.New(rand.NewPCG(6, 6))})
	if err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runCLI(t, getenv, "", "import", "claude-code", tree.Root); code != 0 {
		t.Fatalf("import: %s %s", out, errOut)
	}
	sid := tree.Sessions[0].ID
	os.WriteFile(filepath.Join(data, "config.toml"), []byte("[import]\nexclude = [\""+sid+"\"]\n"), 0o644)
	out, errOut, code := runCLI(t, getenv, "", "gc")
	if code != 0 || !strings.Contains(out, "session "+sid) || !strings.Contains(out, "import.exclude") {
		t.Fatalf("gc: %d %s %s", code, out, errOut)
	}
	if out, _, _ := runCLI(t, getenv, "", "sessions"); strings.Contains(out, sid) {
		t.Errorf("excluded session still listed: %s", out)
	}

	os.WriteFile(filepath.Join(data, "config.toml"), []byte("[gc]\nvacuum = true\nmax_bytes = 1\n"), 0o644)
	out, errOut, code = runCLI(t, getenv, "", "gc")
	if code != 0 || !strings.Contains(out, "gc.max_bytes") {
		t.Fatalf("gc with quota: %d %s %s", code, out, errOut)
	}
	if out, _, _ := runCLI(t, getenv, "", "sessions"); strings.TrimSpace(out) != "" && strings.Contains(out, tree.Sessions[len(tree.Sessions)-1].ID) {
		t.Errorf("sessions left over a 1-byte quota: %s", out)
	}
}
