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
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": t.TempDir(), "CAIRN_MODEL": "none"})
	meta := `{"breadcrumbs":{"files":["main.go:1","missing.go"],"commits":["` + h.String() + `"],"pull_requests":["#3"]}}`
	if _, stderr, code := runCLI(t, getenv, "", "note", "--agent", "ann", "--meta", meta, "main is tiny"); code != 0 {
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
}

func TestCheckRepoNeedsBreadcrumbs(t *testing.T) {
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": t.TempDir(), "CAIRN_MODEL": "none"})
	if _, stderr, code := runCLI(t, getenv, "", "check", "--repo", "."); code != 2 || !strings.Contains(stderr, "--repo goes with --breadcrumbs") {
		t.Fatalf("check --repo: exit %d %s", code, stderr)
	}
}
