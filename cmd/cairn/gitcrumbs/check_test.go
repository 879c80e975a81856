package gitcrumbs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/cmd/cairn/gitcrumbs"
	"github.com/cairn-dev/cairn/engine"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// repo is a real repository in a temp dir, written with go-git (no git
// binary needed), with a clock that advances a minute per commit.
type repo struct {
	t    testing.TB
	dir  string
	r    *git.Repository
	wt   *git.Worktree
	when time.Time
}

func newRepo(t testing.TB) *repo {
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	return &repo{t: t, dir: dir, r: r, wt: wt, when: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (g *repo) write(path, text string) {
	full := filepath.Join(g.dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		g.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
		g.t.Fatal(err)
	}
	if _, err := g.wt.Add(path); err != nil {
		g.t.Fatal(err)
	}
}

func (g *repo) commit(msg string) (plumbing.Hash, time.Time) {
	g.when = g.when.Add(time.Minute)
	h, err := g.wt.Commit(msg, &git.CommitOptions{AllowEmptyCommits: true, Author: &object.Signature{Name: "t", Email: "t@example.com", When: g.when}})
	if err != nil {
		g.t.Fatal(err)
	}
	return h, g.when
}

func lines(n int, prefix string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s line %d\n", prefix, i)
	}
	return b.String()
}

func note(id int64, at time.Time, bc map[string][]string) engine.Message {
	md, _ := json.Marshal(map[string]any{"breadcrumbs": bc})
	return engine.Message{ID: id, Metadata: md, HasBreadcrumbs: true, CreatedAt: at}
}

func TestCheckAgainstARealRepository(t *testing.T) {
	ctx := context.Background()
	g := newRepo(t)
	g.write("src/auth.go", lines(100, "auth"))
	g.write("src/keep.go", lines(10, "keep"))
	g.write("src/old.go", lines(30, "old"))
	g.write("src/gone.go", "bye\n")
	first, firstAt := g.commit("first")

	// After the notes: rewrite lines 50-60 of auth.go, rename old.go,
	// delete gone.go.
	text := lines(100, "auth")
	text = strings.Replace(text, "auth line 55\n", "rewritten line 55\n", 1)
	g.write("src/auth.go", text)
	if _, err := g.wt.Move("src/old.go", "pkg/renamed.go"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.wt.Remove("src/gone.go"); err != nil {
		t.Fatal(err)
	}
	g.commit("second")

	chk, err := gitcrumbs.Open(g.dir)
	if err != nil {
		t.Fatal(err)
	}
	short := first.String()[:7]
	// One note bases itself on its commit breadcrumb, the other on its time.
	for _, m := range []engine.Message{
		note(1, time.Now(), map[string][]string{"commits": {short}, "files": {"src/auth.go:1-10", "src/auth.go:50-60", "src/old.go:3-5", "src/gone.go", "src/keep.go:8-12"},
			"modified_files": {filepath.Join(g.dir, "src/keep.go")}, "deleted_files": {"src/gone.go"}, "issues": {"#7"}}),
		note(2, firstAt.Add(time.Second), map[string][]string{"files": {"src/auth.go:50-60"}, "created_files": {"src/nothere.go"}, "commits": {"deadbeef"}}),
	} {
		rs, err := chk.Check(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range rs {
			s := string(r.State)
			if r.MovedTo != "" {
				s += " " + r.MovedTo
			}
			got[r.Kind+" "+r.Ref] = s
		}
		want := map[int64]map[string]string{
			1: {
				"commits " + short:        "valid",
				"files src/auth.go:1-10":  "valid",
				"files src/auth.go:50-60": "changed",
				"files src/old.go:3-5":    "moved pkg/renamed.go",
				"files src/gone.go":       "gone",
				"files src/keep.go:8-12":  "changed", // past the end
				"modified_files " + filepath.Join(g.dir, "src/keep.go"): "valid",
				"deleted_files src/gone.go":                             "valid",
				"issues #7":                                             "form",
			},
			2: {
				"files src/auth.go:50-60":      "changed",
				"created_files src/nothere.go": "gone",
				"commits deadbeef":             "gone",
			},
		}[m.ID]
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("note %d:\n got %v\nwant %v", m.ID, got, want)
		}
	}
}

// TestForcePushedHistory: a commit that HEAD no longer reaches (the branch
// was reset past it) is gone, though its object is still there.
func TestForcePushedHistory(t *testing.T) {
	ctx := context.Background()
	g := newRepo(t)
	g.write("a.txt", "one\n")
	base, _ := g.commit("base")
	g.write("a.txt", "two\n")
	dropped, _ := g.commit("dropped")
	if err := g.wt.Reset(&git.ResetOptions{Commit: base, Mode: git.HardReset}); err != nil {
		t.Fatal(err)
	}
	chk, err := gitcrumbs.Open(g.dir)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := chk.Check(ctx, note(1, time.Now(), map[string][]string{"commits": {dropped.String(), base.String()}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		want := gitcrumbs.Valid
		if r.Ref == dropped.String() {
			want = gitcrumbs.Gone
		}
		if r.State != want {
			t.Errorf("%s: %s (%s), want %s", r.Ref, r.State, r.Reason, want)
		}
	}
	var rep gitcrumbs.Report
	rep.Add("/src/app", rs)
	if rep.Checked != 2 || rep.Valid != 1 || rep.Rate != 0.5 || len(rep.Stale) != 1 {
		t.Errorf("report: %+v", rep)
	}
}

func TestOpenOutsideARepository(t *testing.T) {
	if _, err := gitcrumbs.Open(t.TempDir()); !errors.Is(err, gitcrumbs.ErrNoRepo) {
		t.Fatalf("Open of a plain dir: %v", err)
	}
}
