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

// TestCheckBreadcrumbsCommand: cairn check --breadcrumbs against a real
// repository in a temp dir prints the validity rate and the stale
// breadcrumbs, as text and as JSON; a directory outside any repository is
// bad input naming --repo.
func TestCheckBreadcrumbsCommand(t *testing.T) {
	repoDir := t.TempDir()
	r, err := git.PlainInit(repoDir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := r.Worktree()
	if err := os.WriteFile(filepath.Join(repoDir, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Add("main.go"); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit("init", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data, "CAIRN_MODEL": "none"})
	meta := `{"breadcrumbs":{"files":["main.go:1","missing.go"],"commits":["` + h.String() + `"],"pull_requests":["#3"]}}`
	// The note is written in the repository (its breadcrumbs record it).
	inRepo := envMap(map[string]string{"CAIRN_DATA_DIR": data, "CAIRN_MODEL": "none", "CAIRN_BREADCRUMBS_REPO": repoDir})
	if _, stderr, code := runCLI(t, inRepo, "", "note", "--agent", "ann", "--meta", meta, "main is tiny"); code != 0 {
		t.Fatalf("note: %s", stderr)
	}
	out, stderr, code := runCLI(t, getenv, "", "check", "--breadcrumbs", "--repo", repoDir)
	if code != 0 || !strings.Contains(out, "3 files and commits, 2 valid (66.7%)") || !strings.Contains(out, "gone     #1 files missing.go (not at HEAD)") {
		t.Fatalf("check --breadcrumbs: exit %d\n%s%s", code, out, stderr)
	}
	out, _, code = runCLI(t, getenv, "", "check", "--breadcrumbs", "--repo", repoDir, "--json")
	var rep struct {
		Checked, Valid int
		Rate           float64 `json:"validity_rate"`
		Stale          []struct{ Ref, State string }
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || rep.Checked != 3 || rep.Valid != 2 || len(rep.Stale) != 1 || rep.Stale[0].Ref != "missing.go" {
		t.Fatalf("--json: exit %d %v %s", code, err, out)
	}
	if _, stderr, code := runCLI(t, getenv, "", "check", "--breadcrumbs", "--repo", t.TempDir()); code != 2 || !strings.Contains(stderr, "invalid repo") {
		t.Fatalf("outside a repository: exit %d %s", code, stderr)
	}

	// With the repository configured, show and search attach the marks
	// the check cached, and the filter leaves out the note with a gone file.
	getenv = envMap(map[string]string{"CAIRN_DATA_DIR": t.TempDir(), "CAIRN_MODEL": "none", "CAIRN_BREADCRUMBS_REPO": repoDir})
	if _, stderr, code := runCLI(t, getenv, "", "note", "--agent", "ann", "--meta", meta, "main is tiny"); code != 0 {
		t.Fatalf("note: %s", stderr)
	}
	meta = `{"breadcrumbs":{"files":["main.go:1"]}}`
	if _, stderr, code := runCLI(t, getenv, "", "note", "--agent", "ann", "--meta", meta, "main is small"); code != 0 {
		t.Fatalf("note: %s", stderr)
	}
	out, _, _ = runCLI(t, getenv, "", "show", "1")
	if strings.Contains(out, "breadcrumbs:") {
		t.Fatalf("show before any check has marks:\n%s", out)
	}
	if out, stderr, code := runCLI(t, getenv, "", "check", "--breadcrumbs"); code != 0 || !strings.Contains(out, "at "+h.String()[:12]) {
		t.Fatalf("check with the configured repository: exit %d\n%s%s", code, out, stderr)
	}
	out, _, _ = runCLI(t, getenv, "", "show", "1")
	for _, want := range []string{"breadcrumbs:  gone files missing.go (not at HEAD)", "breadcrumbs:  valid files main.go:1", "breadcrumbs:  form pull_requests #3"} {
		if !strings.Contains(out, want) {
			t.Fatalf("show lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = runCLI(t, getenv, "", "search", "--mode", "keyword", "--breadcrumbs-valid", "--json", "main")
	var hit struct {
		ID              int64 `json:"id"`
		BreadcrumbCheck struct {
			Status string
			Marks  []struct{ State string }
		} `json:"breadcrumb_check"`
	}
	if err := json.Unmarshal([]byte(out), &hit); err != nil || strings.Count(out, "\n") != 1 || hit.ID != 2 || hit.BreadcrumbCheck.Status != "current" || len(hit.BreadcrumbCheck.Marks) != 1 || hit.BreadcrumbCheck.Marks[0].State != "valid" {
		t.Fatalf("search --breadcrumbs-valid: %v\n%s", err, out)
	}
}

func TestCheckRepoNeedsBreadcrumbs(t *testing.T) {
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": t.TempDir(), "CAIRN_MODEL": "none"})
	if _, stderr, code := runCLI(t, getenv, "", "check", "--repo", "."); code != 2 || !strings.Contains(stderr, "--repo goes with --breadcrumbs") {
		t.Fatalf("check --repo: exit %d %s", code, stderr)
	}
}
