package gitcrumbs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/cmd/cairn/gitcrumbs"
	"github.com/cairn-dev/cairn/cmd/cairn/searchwire"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/go-git/go-git/v5/plumbing"
)

// crumbsFixture is a repository with four files and an engine with four
// notes pointing into them, the notes' base being the first commit.
type crumbsFixture struct {
	g     *repo
	eng   *engine.Engine
	c1    plumbing.Hash
	notes map[string]int64 // by the file each points at
}

func newCrumbsFixture(t *testing.T) *crumbsFixture {
	t.Helper()
	g := newRepo(t)
	for _, f := range []string{"a", "b", "c", "d"} {
		g.write("src/"+f+".go", lines(10, f))
	}
	c1, _ := g.commit("four files")
	hf, err := gitcrumbs.FindRepo(filepath.Join(g.dir, "src"))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := sqlite.OpenEngine(context.Background(), t.TempDir(), engine.Options{BreadcrumbRepos: gitcrumbs.Repos{}, BreadcrumbRepo: hf.Root()}, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	fx := &crumbsFixture{g: g, eng: eng, c1: c1, notes: map[string]int64{}}
	for _, f := range []string{"a", "b", "c", "d"} {
		res, err := eng.WriteNote(context.Background(), engine.NewNote{
			Agent: "bob", Content: "the retry loop lives in " + f,
			Breadcrumbs: engine.Breadcrumbs{Files: []string{"src/" + f + ".go:2-4"}, Commits: []string{c1.String()}},
		})
		if err != nil {
			t.Fatal(err)
		}
		fx.notes[f] = res.ID
	}
	return fx
}

// moveHead renames a, rewrites b's lines 2-4 and deletes c.
func (fx *crumbsFixture) moveHead() plumbing.Hash {
	g := fx.g
	if _, err := g.wt.Move("src/a.go", "pkg/a2.go"); err != nil {
		g.t.Fatal(err)
	}
	g.write("src/b.go", strings.Replace(lines(10, "b"), "b line 3", "b line three", 1))
	if _, err := g.wt.Remove("src/c.go"); err != nil {
		g.t.Fatal(err)
	}
	h, _ := g.commit("move, rewrite, delete")
	return h
}

// checks searches for the notes and returns each one's check by file.
func (fx *crumbsFixture) checks(t *testing.T, spec searchwire.SearchSpec) map[string]*engine.BreadcrumbCheck {
	t.Helper()
	if spec.Query == "" {
		spec.Query = "retry loop"
	}
	spec.Mode = "keyword"
	req, err := spec.Request()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := fx.eng.Search(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*engine.BreadcrumbCheck{}
	for _, r := range rs {
		for f, id := range fx.notes {
			if id == r.Message.ID {
				out[f] = r.Message.BreadcrumbCheck
			}
		}
	}
	return out
}

func fileMark(c *engine.BreadcrumbCheck) engine.BreadcrumbMark {
	for _, m := range c.Marks {
		if m.Kind == "files" {
			return m
		}
	}
	return engine.BreadcrumbMark{}
}

// TestSearchMarksAfterHeadMoves: search results carry the marks of the
// HEAD they were checked at; when HEAD moves they say stale until a
// refresh, which then marks the renamed file moved (with its new path),
// the rewritten range changed and the deleted file gone.
func TestSearchMarksAfterHeadMoves(t *testing.T) {
	ctx := context.Background()
	fx := newCrumbsFixture(t)
	head, n, err := gitcrumbs.Refresh(ctx, fx.eng, fx.g.dir)
	if err != nil || n != 4 || head != fx.c1.String() {
		t.Fatalf("first refresh: head %s, %d checked, %v", head, n, err)
	}
	if _, n, err := gitcrumbs.Refresh(ctx, fx.eng, fx.g.dir); err != nil || n != 0 {
		t.Fatalf("a refresh at the same HEAD checked %d (%v)", n, err)
	}
	for f, c := range fx.checks(t, searchwire.SearchSpec{}) {
		if c == nil || c.Status != engine.CheckCurrent || c.Head != fx.c1.String() || fileMark(c).State != engine.MarkValid {
			t.Fatalf("%s at the first commit: %+v", f, c)
		}
	}

	c2 := fx.moveHead()
	for f, c := range fx.checks(t, searchwire.SearchSpec{}) {
		if c == nil || c.Status != engine.CheckStale || c.Head != c2.String() || c.CheckedAt != fx.c1.String() || c.Marks != nil {
			t.Fatalf("%s after HEAD moved, before a refresh: %+v", f, c)
		}
	}
	if _, n, err := gitcrumbs.Refresh(ctx, fx.eng, fx.g.dir); err != nil || n != 4 {
		t.Fatalf("refresh after HEAD moved: %d checked, %v", n, err)
	}
	got := fx.checks(t, searchwire.SearchSpec{})
	want := map[string]engine.BreadcrumbMark{
		"a": {State: engine.MarkMoved, MovedTo: "pkg/a2.go"},
		"b": {State: engine.MarkChanged},
		"c": {State: engine.MarkGone},
		"d": {State: engine.MarkValid},
	}
	for f, w := range want {
		c := got[f]
		if c == nil || c.Status != engine.CheckCurrent || c.Head != c2.String() {
			t.Fatalf("%s after the refresh: %+v", f, c)
		}
		if m := fileMark(c); m.State != w.State || m.MovedTo != w.MovedTo {
			t.Fatalf("%s: %+v, want %s %s", f, m, w.State, w.MovedTo)
		}
	}

	// get_message / cairn show / HTTP reads go through GetMessage.
	m, err := fx.eng.GetMessage(ctx, fx.notes["a"])
	if err != nil || fileMark(m.BreadcrumbCheck).MovedTo != "pkg/a2.go" {
		t.Fatalf("GetMessage: %+v, %v", m.BreadcrumbCheck, err)
	}

	// The filter keeps the note whose breadcrumbs are all valid.
	valid := fx.checks(t, searchwire.SearchSpec{BreadcrumbsValid: true})
	if keys := sortedKeys(valid); !slices.Equal(keys, []string{"d"}) {
		t.Fatalf("breadcrumbs_valid: %v", keys)
	}
}

// TestDemoteStaleAfterHeadMoves: with demote_stale the notes whose range
// changed or whose file is gone rank below the others; a moved one is not
// demoted.
func TestDemoteStaleAfterHeadMoves(t *testing.T) {
	ctx := context.Background()
	fx := newCrumbsFixture(t)
	fx.moveHead()
	if _, _, err := gitcrumbs.Refresh(ctx, fx.eng, fx.g.dir); err != nil {
		t.Fatal(err)
	}
	req, err := searchwire.SearchSpec{Query: "retry loop", Mode: "keyword", DemoteStale: 0.5}.Request()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := fx.eng.Search(ctx, req)
	if err != nil || len(rs) != 4 {
		t.Fatalf("%d results, %v", len(rs), err)
	}
	var order []int64
	for _, r := range rs {
		order = append(order, r.Message.ID)
		stale := r.Message.ID == fx.notes["b"] || r.Message.ID == fx.notes["c"]
		if r.Scores.Demoted != stale {
			t.Fatalf("#%d demoted %v", r.Message.ID, r.Scores.Demoted)
		}
	}
	if top := order[:2]; !slices.Contains(top, fx.notes["a"]) || !slices.Contains(top, fx.notes["d"]) {
		t.Fatalf("order %v: the moved and the valid note should lead (a=%d d=%d)", order, fx.notes["a"], fx.notes["d"])
	}
}

// TestRefresherFollowsHead: the background refresher fills the cache at
// start and again after HEAD moves, without any search waiting for it.
func TestRefresherFollowsHead(t *testing.T) {
	ctx := context.Background()
	fx := newCrumbsFixture(t)
	rf := gitcrumbs.StartRefresher(ctx, fx.eng, fx.g.dir, gitcrumbs.RefresherOptions{Every: 5 * time.Millisecond})
	defer rf.Stop()
	waitFor := func(head plumbing.Hash, state engine.MarkState) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) { // generous: the machine may be loaded
			m, err := fx.eng.GetMessage(ctx, fx.notes["c"])
			if err != nil {
				t.Fatal(err)
			}
			if c := m.BreadcrumbCheck; c != nil && c.Status == engine.CheckCurrent && c.Head == head.String() && fileMark(c).State == state {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no marks at %s with %s: %+v", head, state, m.BreadcrumbCheck)
			}
		}
	}
	waitFor(fx.c1, engine.MarkValid)
	waitFor(fx.moveHead(), engine.MarkGone)
	rf.Stop()
	rf.Stop() // idempotent
}

// TestHeadFile: HEAD is read from the files, through a symbolic ref that
// is loose or packed, and from a subdirectory.
func TestHeadFile(t *testing.T) {
	g := newRepo(t)
	g.write("x/y.txt", "y\n")
	c1, _ := g.commit("one")
	hf, err := gitcrumbs.FindRepo(filepath.Join(g.dir, "x"))
	if err != nil {
		t.Fatal(err)
	}
	if h, err := hf.Head(); err != nil || h != c1.String() {
		t.Fatalf("loose: %s, %v (want %s)", h, err, c1)
	}
	ref := filepath.Join(g.dir, ".git", "refs", "heads", "master")
	if err := os.Remove(ref); err != nil {
		t.Fatal(err)
	}
	packed := "# pack-refs with: peeled fully-peeled sorted\n" + c1.String() + " refs/heads/master\n"
	if err := os.WriteFile(filepath.Join(g.dir, ".git", "packed-refs"), []byte(packed), 0o644); err != nil {
		t.Fatal(err)
	}
	if h, err := hf.Head(); err != nil || h != c1.String() {
		t.Fatalf("packed: %s, %v (want %s)", h, err, c1)
	}
	if _, err := gitcrumbs.FindRepo(t.TempDir()); !errors.Is(err, gitcrumbs.ErrNoRepo) {
		t.Fatalf("outside a repository: %v", err)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestRefreshElsewhereKeepsMarks: a refresh in another repository (a
// cairn mcp or cairn serve started there) neither checks nor changes the
// notes of the first: their marks are the same before and after, and not
// gone although none of their files is in the other repository.
func TestRefreshElsewhereKeepsMarks(t *testing.T) {
	ctx := context.Background()
	fx := newCrumbsFixture(t)
	if _, n, err := gitcrumbs.Refresh(ctx, fx.eng, fx.g.dir); err != nil || n != 4 {
		t.Fatalf("refresh in the notes' repository: %d checked, %v", n, err)
	}
	before := fx.checks(t, searchwire.SearchSpec{})
	other := newRepo(t)
	other.write("README.md", "another project\n")
	other.commit("init")
	if _, n, err := gitcrumbs.Refresh(ctx, fx.eng, other.dir); err != nil || n != 0 {
		t.Fatalf("refresh in another repository: %d checked, %v", n, err)
	}
	after := fx.checks(t, searchwire.SearchSpec{})
	for f, c := range before {
		if c == nil || c.Status != engine.CheckCurrent || fileMark(c).State != engine.MarkValid {
			t.Fatalf("%s: %+v", f, c)
		}
		if a := after[f]; a == nil || a.Status != c.Status || a.Head != c.Head || fileMark(a) != fileMark(c) {
			t.Fatalf("%s changed by a refresh elsewhere: %+v -> %+v", f, c, a)
		}
	}
}
