package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// commitFile writes name in the repository at dir and commits it.
func commitFile(t *testing.T, dir, name, text string) {
	t.Helper()
	r, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := r.Worktree()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Add(name); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Commit("write "+name, &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}}); err != nil {
		t.Fatal(err)
	}
}

func newGitRepo(t *testing.T, dir, file, text string) string {
	t.Helper()
	if _, err := git.PlainInit(dir, false); err != nil {
		t.Fatal(err)
	}
	commitFile(t, dir, file, text)
	return dir
}

// TestBreadcrumbMarksSameFromEveryRepository: two real repositories share
// one data dir. Every note is checked against the repository it was
// written in, so checks, shows and the breadcrumbs_valid filter give the
// same marks whichever repository the process runs in; a note that
// recorded no repository is adopted by the repository holding its file
// and left unmarked by the other; a repository no longer on the machine
// keeps its notes' last marks instead of calling them gone.
func TestBreadcrumbMarksSameFromEveryRepository(t *testing.T) {
	base := t.TempDir()
	alpha := newGitRepo(t, filepath.Join(base, "alpha"), "a.go", "package alpha\n\nfunc A() {}\n")
	beta := newGitRepo(t, filepath.Join(base, "beta"), "b.go", "package beta\n\nfunc B() {}\n")
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": filepath.Join(base, "data"), "CAIRN_MODEL": "none"})
	cli := func(dir string, args ...string) string {
		t.Helper()
		t.Chdir(dir)
		out, stderr, code := runCLI(t, getenv, "", args...)
		if code != 0 {
			t.Fatalf("in %s: cairn %s: exit %d\n%s%s", filepath.Base(dir), strings.Join(args, " "), code, out, stderr)
		}
		return out
	}
	cli(alpha, "note", "--agent", "ann", "--file", "a.go:3", "alpha declares A")
	cli(beta, "note", "--agent", "ann", "--file", "b.go:3", "beta declares B")
	// Written before repositories were recorded: no breadcrumbs_repo.
	legacy := filepath.Join(base, "legacy.jsonl")
	if err := os.WriteFile(legacy, []byte(`{"channel_id":"agent-notes:ann","sender_id":"ann","content":"beta's B is exported","metadata":{"breadcrumbs":{"files":["b.go:3"]}}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cli(alpha, "import", "messages", legacy)
	var m1 struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(cli(beta, "show", "1", "--json")), &m1); err != nil || m1.Metadata["breadcrumbs_repo"] != alpha {
		t.Fatalf("note 1 records %v (%v), want %s", m1.Metadata["breadcrumbs_repo"], err, alpha)
	}

	views := func(dir string) string {
		var b strings.Builder
		for _, id := range []string{"1", "2", "3"} {
			b.WriteString(cli(dir, "show", id))
		}
		b.WriteString(cli(dir, "search", "--mode", "keyword", "--breadcrumbs-valid", "declares exported"))
		return b.String()
	}
	// Checked from alpha: both recorded notes are checked in their own
	// repository; the legacy note is not in alpha, so it gets no mark.
	var rep struct {
		Repos     map[string]string `json:"repos"`
		Messages  int               `json:"messages"`
		Valid     int               `json:"valid"`
		Unscoped  int               `json:"unscoped"`
		Unreached int               `json:"unreachable"`
	}
	if err := json.Unmarshal([]byte(cli(alpha, "check", "--breadcrumbs", "--json")), &rep); err != nil || len(rep.Repos) != 2 || rep.Messages != 2 || rep.Valid != 2 || rep.Unscoped != 1 {
		t.Fatalf("check from alpha: %+v %v", rep, err)
	}
	fromAlpha := views(alpha)
	for _, want := range []string{"breadcrumbs:  valid files a.go:3", "breadcrumbs:  valid files b.go:3"} {
		if !strings.Contains(fromAlpha, want) {
			t.Fatalf("from alpha, no %q:\n%s", want, fromAlpha)
		}
	}
	if fromBeta := views(beta); fromBeta != fromAlpha {
		t.Fatalf("marks differ by working directory:\nalpha:\n%s\nbeta:\n%s", fromAlpha, fromBeta)
	}
	// Checked from beta: beta adopts the legacy note; alpha's note keeps
	// its marks.
	if err := json.Unmarshal([]byte(cli(beta, "check", "--breadcrumbs", "--json")), &rep); err != nil || rep.Messages != 3 || rep.Valid != 3 || rep.Unscoped != 0 {
		t.Fatalf("check from beta: %+v %v", rep, err)
	}
	fromBeta := views(beta)
	if strings.Count(fromBeta, "breadcrumbs:  valid files b.go:3") != 2 || !strings.Contains(fromBeta, "breadcrumbs:  valid files a.go:3") {
		t.Fatalf("after the check from beta:\n%s", fromBeta)
	}
	if again := views(alpha); again != fromBeta {
		t.Fatalf("marks differ by working directory:\nbeta:\n%s\nalpha:\n%s", fromBeta, again)
	}
	// Checked from alpha again: the adopted note stays beta's.
	cli(alpha, "check", "--breadcrumbs")
	if again := views(alpha); again != fromBeta {
		t.Fatalf("a check from alpha changed beta's marks:\nbefore:\n%s\nafter:\n%s", fromBeta, again)
	}

	// beta's HEAD moves and rewrites B: from either directory its notes
	// are stale until a check, which then marks them changed.
	commitFile(t, beta, "b.go", "package beta\n\nfunc B() int { return 1 }\n")
	if a, b := cli(alpha, "show", "2"), cli(beta, "show", "2"); a != b || !strings.Contains(a, "unknown: checked at") {
		t.Fatalf("after beta moved:\nalpha:\n%s\nbeta:\n%s", a, b)
	}
	cli(alpha, "check", "--breadcrumbs")
	if a, b := cli(alpha, "show", "2"), cli(beta, "show", "2"); a != b || !strings.Contains(a, "breadcrumbs:  changed files b.go:3") {
		t.Fatalf("after the check:\nalpha:\n%s\nbeta:\n%s", a, b)
	}

	// alpha leaves the machine: its note keeps its last (valid) marks,
	// flagged unreachable, and a check does not call them gone.
	if err := os.RemoveAll(alpha); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(cli(beta, "check", "--breadcrumbs", "--json")), &rep); err != nil || rep.Unreached != 1 {
		t.Fatalf("check with alpha gone: %+v %v", rep, err)
	}
	out := cli(beta, "show", "1")
	if !strings.Contains(out, "unreachable: "+alpha) || !strings.Contains(out, "breadcrumbs:  valid files a.go:3") || strings.Contains(out, "gone") {
		t.Fatalf("note of a repository no longer here:\n%s", out)
	}
	if out := cli(beta, "search", "--mode", "keyword", "--breadcrumbs-valid", "--json", "alpha declares"); !strings.Contains(out, `"id":1`) {
		t.Fatalf("breadcrumbs_valid leaves out the last valid marks of an unreachable repository:\n%s", out)
	}
}
