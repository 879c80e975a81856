package ops_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestBreadcrumbMarksFollowHead: reads attach the marks of the current
// HEAD, say "stale" once HEAD moves, and a refresh at the new HEAD brings
// them back; the walk of messages to mark follows the same rule.
func TestBreadcrumbMarksFollowHead(t *testing.T) {
	ctx := context.Background()
	e, h, ids := enginetest.MarksFixture(t)
	if m, err := e.GetMessage(ctx, ids[0]); err != nil || m.BreadcrumbCheck != nil {
		t.Fatalf("never checked: %+v, %v", m.BreadcrumbCheck, err)
	}
	todo, err := ops.MessagesToMark(ctx, e, enginetest.Repo1, enginetest.Head1, 0, 10)
	if err != nil || !slices.Equal(msgIDs(todo), ids[:3]) {
		t.Fatalf("to mark: %v, %v", msgIDs(todo), err)
	}
	err = ops.PutBreadcrumbMarks(ctx, e, enginetest.Repo1, enginetest.Head1, map[int64][]engine.BreadcrumbMark{
		ids[0]: enginetest.Mark(engine.MarkValid, "f0.go:1-3"),
		ids[1]: {{Kind: "files", Ref: "f1.go:1-3", State: engine.MarkMoved, MovedTo: "g1.go"}},
		ids[2]: enginetest.Mark(engine.MarkChanged, "f2.go:1-3"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if todo, _ := ops.MessagesToMark(ctx, e, enginetest.Repo1, enginetest.Head1, 0, 10); len(todo) != 0 {
		t.Fatalf("still to mark at the same HEAD: %v", msgIDs(todo))
	}
	m, err := e.GetMessage(ctx, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if c := m.BreadcrumbCheck; c == nil || c.Status != engine.CheckCurrent || c.Head != enginetest.Head1 || len(c.Marks) != 1 || c.Marks[0].State != engine.MarkMoved || c.Marks[0].MovedTo != "g1.go" {
		t.Fatalf("check = %+v", m.BreadcrumbCheck)
	}
	for _, mode := range []string{"keyword", "semantic", "hybrid", ""} {
		query := "retry backoff"
		if mode == "" {
			query = ""
		}
		for _, r := range enginetest.Search(t, e, engine.SearchRequest{Query: query, Mode: engine.SearchMode(mode)}) {
			if (r.Message.ID == ids[3]) != (r.Message.BreadcrumbCheck == nil) {
				t.Fatalf("%q: #%d check %+v", mode, r.Message.ID, r.Message.BreadcrumbCheck)
			}
		}
	}

	h.Set(enginetest.Head2)
	m, _ = e.GetMessage(ctx, ids[1])
	if c := m.BreadcrumbCheck; c == nil || c.Status != engine.CheckStale || c.Head != enginetest.Head2 || c.CheckedAt != enginetest.Head1 || c.Marks != nil {
		t.Fatalf("after HEAD moved: %+v", m.BreadcrumbCheck)
	}
	if todo, _ := ops.MessagesToMark(ctx, e, enginetest.Repo1, enginetest.Head2, 0, 10); !slices.Equal(msgIDs(todo), ids[:3]) {
		t.Fatalf("to mark at the new HEAD: %v", msgIDs(todo))
	}
	if err := ops.PutBreadcrumbMarks(ctx, e, enginetest.Repo1, enginetest.Head2, map[int64][]engine.BreadcrumbMark{ids[1]: enginetest.Mark(engine.MarkGone, "f1.go:1-3")}); err != nil {
		t.Fatal(err)
	}
	m, _ = e.GetMessage(ctx, ids[1])
	if c := m.BreadcrumbCheck; c == nil || c.Status != engine.CheckCurrent || c.Marks[0].State != engine.MarkGone {
		t.Fatalf("after the refresh: %+v", m.BreadcrumbCheck)
	}
}

// TestBreadcrumbMarksGoWithTheMessage: a deleted message's marks are
// deleted with it (they hold its breadcrumbs' text).
func TestBreadcrumbMarksGoWithTheMessage(t *testing.T) {
	ctx := context.Background()
	e, _, ids := enginetest.MarksFixture(t)
	if err := ops.PutBreadcrumbMarks(ctx, e, enginetest.Repo1, enginetest.Head1, map[int64][]engine.BreadcrumbMark{ids[1]: enginetest.Mark(engine.MarkGone, "f1.go:1-3")}); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteMessage(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	if err := ops.PutBreadcrumbMarks(ctx, e, enginetest.Repo1, enginetest.Head1, map[int64][]engine.BreadcrumbMark{ids[1]: enginetest.Mark(engine.MarkGone, "f1.go:1-3")}); err != nil {
		t.Fatal(err) // a message deleted since a check began is skipped
	}
	if todo, _ := ops.MessagesToMark(ctx, e, enginetest.Repo1, strings.Repeat("c", 40), 0, 10); !slices.Equal(msgIDs(todo), []int64{ids[0], ids[2]}) {
		t.Fatalf("after delete: %v", msgIDs(todo))
	}
	n, err := enginetest.CountMarks(ctx, e)
	if err != nil || n != 0 {
		t.Fatalf("marks rows after delete: %d, %v", n, err)
	}
}

func msgIDs(ms []engine.Message) []int64 { return enginetest.IDs(ms) }

// TestBreadcrumbRepoRecorded: live writes with breadcrumbs record the
// writer's repository unless the metadata names one; imports keep what
// they carry; a bad repository is refused naming the field, and nothing
// is written.
func TestBreadcrumbRepoRecorded(t *testing.T) {
	ctx := context.Background()
	e := enginetest.OpenDir(t, t.TempDir(), engine.Options{BreadcrumbRepo: enginetest.Repo1})
	crumbs := engine.Breadcrumbs{Files: []string{"a.go"}}
	for _, c := range []struct {
		name string
		note engine.NewNote
		want string
	}{
		{"stamped", engine.NewNote{Agent: "bob", Content: "one", Breadcrumbs: crumbs}, enginetest.Repo1},
		{"no breadcrumbs", engine.NewNote{Agent: "bob", Content: "two"}, ""},
		{"its own", engine.NewNote{Agent: "bob", Content: "three", Breadcrumbs: crumbs, Metadata: []byte(`{"breadcrumbs_repo":"` + enginetest.Repo2 + `"}`)}, enginetest.Repo2},
	} {
		id := enginetest.MustNote(t, e, c.note)
		m, err := e.GetMessage(ctx, id)
		if err != nil || m.BreadcrumbRepo() != c.want {
			t.Errorf("%s: repo %q (%v), want %q", c.name, m.BreadcrumbRepo(), err, c.want)
		}
	}
	res, err := e.StoreMessages(ctx, []engine.NewMessage{{Channel: "agent-notes:bob", Sender: "bob", Content: "imported", Breadcrumbs: crumbs}})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := e.GetMessage(ctx, res[0].ID); m.BreadcrumbRepo() != "" {
		t.Errorf("an import recorded the importer's repository %q", m.BreadcrumbRepo())
	}
	for _, md := range []string{`{"breadcrumbs_repo":"relative/dir"}`, `{"breadcrumbs_repo":7}`} {
		_, err := e.WriteNote(ctx, engine.NewNote{Agent: "bob", Content: "bad " + md, Breadcrumbs: crumbs, Metadata: []byte(md)})
		var inv *engine.InvalidError
		if !errors.As(err, &inv) || inv.Field != "metadata.breadcrumbs_repo" {
			t.Errorf("%s: %v", md, err)
		}
	}
	if st, _ := ops.StoreStats(ctx, e); st.Messages != 4 {
		t.Errorf("%d messages after refused writes, want 4", st.Messages)
	}
}

// TestBreadcrumbMarksPerRepository: each note is offered for checking to
// its own repository only and its marks follow that repository's HEAD; a
// note that recorded none is offered to every repository once per HEAD
// until one adopts it.
func TestBreadcrumbMarksPerRepository(t *testing.T) {
	ctx := context.Background()
	h := &enginetest.MovableHeads{}
	h.SetRepo(enginetest.Repo1, enginetest.Head1)
	h.SetRepo(enginetest.Repo2, enginetest.Head2)
	e := enginetest.OpenDir(t, t.TempDir(), engine.Options{BreadcrumbRepos: h})
	note := func(repo string) int64 {
		md := `{}`
		if repo != "" {
			md = `{"breadcrumbs_repo":"` + repo + `"}`
		}
		return enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: "note of " + repo, Metadata: []byte(md), Breadcrumbs: engine.Breadcrumbs{Files: []string{"x.go"}}})
	}
	one, two, legacy := note(enginetest.Repo1), note(enginetest.Repo2), note("")
	offered := func(repo, head string) []int64 {
		t.Helper()
		ms, err := ops.MessagesToMark(ctx, e, repo, head, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return msgIDs(ms)
	}
	if got := offered(enginetest.Repo1, enginetest.Head1); !slices.Equal(got, []int64{one, legacy}) {
		t.Fatalf("offered to enginetest.Repo1: %v", got)
	}
	if got := offered(enginetest.Repo2, enginetest.Head2); !slices.Equal(got, []int64{two, legacy}) {
		t.Fatalf("offered to enginetest.Repo2: %v", got)
	}
	// enginetest.Repo1 does not hold the legacy note: no mark, not offered again at
	// that HEAD; enginetest.Repo2 still gets it, and adopts it.
	if err := ops.PutBreadcrumbMarks(ctx, e, enginetest.Repo1, enginetest.Head1, map[int64][]engine.BreadcrumbMark{one: enginetest.Mark(engine.MarkValid, "x.go")}); err != nil {
		t.Fatal(err)
	}
	if err := ops.PutBreadcrumbMarks(ctx, e, "", enginetest.Head1, map[int64][]engine.BreadcrumbMark{legacy: nil}); err != nil {
		t.Fatal(err)
	}
	if got := offered(enginetest.Repo1, enginetest.Head1); len(got) != 0 {
		t.Fatalf("offered to enginetest.Repo1 again at the same HEAD: %v", got)
	}
	if m, _ := e.GetMessage(ctx, legacy); m.BreadcrumbCheck != nil {
		t.Fatalf("a note of no known repository has a check: %+v", m.BreadcrumbCheck)
	}
	if err := ops.PutBreadcrumbMarks(ctx, e, enginetest.Repo2, enginetest.Head2, map[int64][]engine.BreadcrumbMark{two: enginetest.Mark(engine.MarkGone, "x.go"), legacy: enginetest.Mark(engine.MarkValid, "x.go")}); err != nil {
		t.Fatal(err)
	}
	if got := offered(enginetest.Repo1, strings.Repeat("e", 40)); !slices.Equal(got, []int64{one}) {
		t.Fatalf("after adoption by enginetest.Repo2, offered to enginetest.Repo1 at a new HEAD: %v", got)
	}
	// enginetest.Repo1's HEAD moves: only its note goes stale.
	h.SetRepo(enginetest.Repo1, strings.Repeat("e", 40))
	want := map[int64]string{one: engine.CheckStale, two: engine.CheckCurrent, legacy: engine.CheckCurrent}
	for id, status := range want {
		m, err := e.GetMessage(ctx, id)
		if err != nil || m.BreadcrumbCheck == nil || m.BreadcrumbCheck.Status != status {
			t.Fatalf("#%d: %+v %v, want %s", id, m.BreadcrumbCheck, err, status)
		}
	}
	// enginetest.Repo2 leaves the machine: its notes keep their last marks.
	h.SetRepo(enginetest.Repo2, "")
	m, _ := e.GetMessage(ctx, two)
	if c := m.BreadcrumbCheck; c == nil || c.Status != engine.CheckUnreachable || c.Repo != enginetest.Repo2 || c.CheckedAt != enginetest.Head2 || len(c.Marks) != 1 || c.Marks[0].State != engine.MarkGone {
		t.Fatalf("unreachable repository: %+v", c)
	}
}
