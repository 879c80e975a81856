package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// movableHeads are repositories whose HEADs a test moves; a repository
// without a HEAD is not reachable.
type movableHeads struct {
	mu    sync.Mutex
	heads map[string]string
}

func (h *movableHeads) Head(root string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if v := h.heads[root]; v != "" {
		return v, nil
	}
	return "", errors.New("not reachable")
}

// set moves repo1's HEAD.
func (h *movableHeads) set(s string) { h.setRepo(repo1, s) }

func (h *movableHeads) setRepo(root, head string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.heads == nil {
		h.heads = map[string]string{}
	}
	h.heads[root] = head
}

var (
	head1 = strings.Repeat("a", 40)
	head2 = strings.Repeat("b", 40)
	repo1 = "/src/one"
	repo2 = "/src/two"
)

// marksFixture writes three notes about the same thing with a file
// breadcrumb each, and one without breadcrumbs, with vectors.
func marksFixture(t *testing.T) (*engine.Engine, *movableHeads, [4]int64) {
	t.Helper()
	h := &movableHeads{}
	h.set(head1)
	e := enginetest.OpenDir(t, t.TempDir(), engine.Options{Embedder: enginetest.NewHashEmbedder("hash-m", 32), BreadcrumbRepos: h, BreadcrumbRepo: repo1})
	var ids [4]int64
	for i := range 3 {
		ids[i] = enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: fmt.Sprintf("retry loop backoff note %d", i),
			Breadcrumbs: engine.Breadcrumbs{Files: []string{fmt.Sprintf("f%d.go:1-3", i)}}})
	}
	ids[3] = enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: "retry loop backoff note without breadcrumbs"})
	if err := ops.SyncVectors(context.Background(), e, nil); err != nil {
		t.Fatal(err)
	}
	return e, h, ids
}

func mark(state engine.MarkState, ref string) []engine.BreadcrumbMark {
	return []engine.BreadcrumbMark{{Kind: "files", Ref: ref, State: state}}
}

func search(t *testing.T, e *engine.Engine, req engine.SearchRequest) []engine.SearchResult {
	t.Helper()
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	rs, err := e.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("%+v: %v", req, err)
	}
	return rs
}

// TestBreadcrumbMarksFollowHead: reads attach the marks of the current
// HEAD, say "stale" once HEAD moves, and a refresh at the new HEAD brings
// them back; the walk of messages to mark follows the same rule.
func TestBreadcrumbMarksFollowHead(t *testing.T) {
	ctx := context.Background()
	e, h, ids := marksFixture(t)
	if m, err := e.GetMessage(ctx, ids[0]); err != nil || m.BreadcrumbCheck != nil {
		t.Fatalf("never checked: %+v, %v", m.BreadcrumbCheck, err)
	}
	todo, err := ops.MessagesToMark(ctx, e, repo1, head1, 0, 10)
	if err != nil || !slices.Equal(msgIDs(todo), ids[:3]) {
		t.Fatalf("to mark: %v, %v", msgIDs(todo), err)
	}
	err = ops.PutBreadcrumbMarks(ctx, e, repo1, head1, map[int64][]engine.BreadcrumbMark{
		ids[0]: mark(engine.MarkValid, "f0.go:1-3"),
		ids[1]: {{Kind: "files", Ref: "f1.go:1-3", State: engine.MarkMoved, MovedTo: "g1.go"}},
		ids[2]: mark(engine.MarkChanged, "f2.go:1-3"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if todo, _ := ops.MessagesToMark(ctx, e, repo1, head1, 0, 10); len(todo) != 0 {
		t.Fatalf("still to mark at the same HEAD: %v", msgIDs(todo))
	}
	m, err := e.GetMessage(ctx, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if c := m.BreadcrumbCheck; c == nil || c.Status != engine.CheckCurrent || c.Head != head1 || len(c.Marks) != 1 || c.Marks[0].State != engine.MarkMoved || c.Marks[0].MovedTo != "g1.go" {
		t.Fatalf("check = %+v", m.BreadcrumbCheck)
	}
	for _, mode := range []string{"keyword", "semantic", "hybrid", ""} {
		query := "retry backoff"
		if mode == "" {
			query = ""
		}
		for _, r := range search(t, e, engine.SearchRequest{Query: query, Mode: engine.SearchMode(mode)}) {
			if (r.Message.ID == ids[3]) != (r.Message.BreadcrumbCheck == nil) {
				t.Fatalf("%q: #%d check %+v", mode, r.Message.ID, r.Message.BreadcrumbCheck)
			}
		}
	}

	h.set(head2)
	m, _ = e.GetMessage(ctx, ids[1])
	if c := m.BreadcrumbCheck; c == nil || c.Status != engine.CheckStale || c.Head != head2 || c.CheckedAt != head1 || c.Marks != nil {
		t.Fatalf("after HEAD moved: %+v", m.BreadcrumbCheck)
	}
	if todo, _ := ops.MessagesToMark(ctx, e, repo1, head2, 0, 10); !slices.Equal(msgIDs(todo), ids[:3]) {
		t.Fatalf("to mark at the new HEAD: %v", msgIDs(todo))
	}
	if err := ops.PutBreadcrumbMarks(ctx, e, repo1, head2, map[int64][]engine.BreadcrumbMark{ids[1]: mark(engine.MarkGone, "f1.go:1-3")}); err != nil {
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
	e, _, ids := marksFixture(t)
	if err := ops.PutBreadcrumbMarks(ctx, e, repo1, head1, map[int64][]engine.BreadcrumbMark{ids[1]: mark(engine.MarkGone, "f1.go:1-3")}); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteMessage(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	if err := ops.PutBreadcrumbMarks(ctx, e, repo1, head1, map[int64][]engine.BreadcrumbMark{ids[1]: mark(engine.MarkGone, "f1.go:1-3")}); err != nil {
		t.Fatal(err) // a message deleted since a check began is skipped
	}
	if todo, _ := ops.MessagesToMark(ctx, e, repo1, strings.Repeat("c", 40), 0, 10); !slices.Equal(msgIDs(todo), []int64{ids[0], ids[2]}) {
		t.Fatalf("after delete: %v", msgIDs(todo))
	}
	n, err := enginetest.CountMarks(ctx, e)
	if err != nil || n != 0 {
		t.Fatalf("marks rows after delete: %d, %v", n, err)
	}
}

// TestSearchBreadcrumbsValid: the filter keeps the notes checked at HEAD
// with every breadcrumb valid, on both sides of a search and in listings,
// and follows HEAD and refreshes (the keyword side must not cache it).
func TestSearchBreadcrumbsValid(t *testing.T) {
	ctx := context.Background()
	e, h, ids := marksFixture(t)
	put := func(head string, states ...engine.MarkState) {
		t.Helper()
		marks := map[int64][]engine.BreadcrumbMark{}
		for i, s := range states {
			marks[ids[i]] = mark(s, "x")
		}
		if err := ops.PutBreadcrumbMarks(ctx, e, repo1, head, marks); err != nil {
			t.Fatal(err)
		}
	}
	got := func(mode string) []int64 {
		t.Helper()
		query := "retry backoff"
		if mode == "" {
			query = ""
		}
		out := enginetest.ResultIDs(search(t, e, engine.SearchRequest{Query: query, Mode: engine.SearchMode(mode), Filter: engine.Filter{BreadcrumbsValid: true}}))
		slices.Sort(out)
		return out
	}
	modes := []string{"keyword", "semantic", "hybrid", ""}
	for _, mode := range modes {
		if g := got(mode); len(g) != 0 {
			t.Fatalf("%q before any check: %v", mode, g)
		}
	}
	put(head1, engine.MarkValid, engine.MarkMoved, engine.MarkValid)
	for _, mode := range modes {
		if g := got(mode); !slices.Equal(g, []int64{ids[0], ids[2]}) {
			t.Fatalf("%q: %v, want %v", mode, g, []int64{ids[0], ids[2]})
		}
	}
	h.set(head2)
	for _, mode := range modes {
		if g := got(mode); len(g) != 0 {
			t.Fatalf("%q after HEAD moved, before a refresh: %v", mode, g)
		}
	}
	put(head2, engine.MarkGone, engine.MarkValid, engine.MarkForm)
	for _, mode := range modes {
		if g := got(mode); !slices.Equal(g, []int64{ids[1], ids[2]}) {
			t.Fatalf("%q after the refresh: %v, want %v", mode, g, []int64{ids[1], ids[2]})
		}
	}

	// A repository not reachable from this machine keeps its last marks.
	h.set("")
	for _, mode := range modes {
		if g := got(mode); !slices.Equal(g, []int64{ids[1], ids[2]}) {
			t.Fatalf("%q with the repository unreachable: %v, want the last marks' %v", mode, g, []int64{ids[1], ids[2]})
		}
	}
}

// TestSearchDemoteStale: demote_stale multiplies the final score of notes
// whose breadcrumbs changed or are gone at HEAD (not moved ones), enough
// to reorder; out-of-range factors are refused.
func TestSearchDemoteStale(t *testing.T) {
	ctx := context.Background()
	e, h, ids := marksFixture(t)
	if err := ops.PutBreadcrumbMarks(ctx, e, repo1, head1, map[int64][]engine.BreadcrumbMark{
		ids[0]: mark(engine.MarkChanged, "x"), ids[1]: mark(engine.MarkMoved, "x"), ids[2]: mark(engine.MarkGone, "x"),
	}); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"keyword", "semantic", "hybrid"} {
		plain := search(t, e, engine.SearchRequest{Query: "retry loop backoff note", Mode: engine.SearchMode(mode)})
		demoted := search(t, e, engine.SearchRequest{Query: "retry loop backoff note", Mode: engine.SearchMode(mode), Ranking: engine.Ranking{StaleFactor: 0.01}})
		base := map[int64]float64{}
		for _, r := range plain {
			base[r.Message.ID] = r.Score
		}
		sawStale := false
		for i, r := range demoted {
			stale := r.Message.ID == ids[0] || r.Message.ID == ids[2]
			want := base[r.Message.ID]
			if stale {
				want *= 0.01
			}
			if r.Scores.Demoted != stale || r.Score != want {
				t.Fatalf("%s: #%d demoted=%v score %v, want %v (plain %v)", mode, r.Message.ID, r.Scores.Demoted, r.Score, want, base[r.Message.ID])
			}
			// The stale notes come after every other note that scored.
			if stale {
				sawStale = true
			} else if sawStale && r.Score > 0 {
				t.Fatalf("%s: #%d (score %v) at rank %d ranks below a demoted note", mode, r.Message.ID, r.Score, i+1)
			}
		}
	}
	// At another HEAD the cache says nothing: nothing is demoted.
	h.set(head2)
	for _, r := range search(t, e, engine.SearchRequest{Query: "retry loop backoff note", Mode: engine.ModeKeyword, Ranking: engine.Ranking{StaleFactor: 0.01}}) {
		if r.Scores.Demoted {
			t.Fatalf("demoted by marks of another HEAD: #%d", r.Message.ID)
		}
	}
	for _, f := range []float64{-0.5, 1.5} {
		var inv *engine.InvalidError
		if err := (engine.SearchRequest{Query: "x", Ranking: engine.Ranking{StaleFactor: f}}).Validate(); !errors.As(err, &inv) || inv.Field != "demote_stale" {
			t.Fatalf("demote_stale %v: %v", f, err)
		}
	}
}

func msgIDs(ms []engine.Message) []int64 { return enginetest.IDs(ms) }

// TestBreadcrumbRepoRecorded: live writes with breadcrumbs record the
// writer's repository unless the metadata names one; imports keep what
// they carry; a bad repository is refused naming the field, and nothing
// is written.
func TestBreadcrumbRepoRecorded(t *testing.T) {
	ctx := context.Background()
	e := enginetest.OpenDir(t, t.TempDir(), engine.Options{BreadcrumbRepo: repo1})
	crumbs := engine.Breadcrumbs{Files: []string{"a.go"}}
	for _, c := range []struct {
		name string
		note engine.NewNote
		want string
	}{
		{"stamped", engine.NewNote{Agent: "bob", Content: "one", Breadcrumbs: crumbs}, repo1},
		{"no breadcrumbs", engine.NewNote{Agent: "bob", Content: "two"}, ""},
		{"its own", engine.NewNote{Agent: "bob", Content: "three", Breadcrumbs: crumbs, Metadata: []byte(`{"breadcrumbs_repo":"` + repo2 + `"}`)}, repo2},
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
	h := &movableHeads{}
	h.setRepo(repo1, head1)
	h.setRepo(repo2, head2)
	e := enginetest.OpenDir(t, t.TempDir(), engine.Options{BreadcrumbRepos: h})
	note := func(repo string) int64 {
		md := `{}`
		if repo != "" {
			md = `{"breadcrumbs_repo":"` + repo + `"}`
		}
		return enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: "note of " + repo, Metadata: []byte(md), Breadcrumbs: engine.Breadcrumbs{Files: []string{"x.go"}}})
	}
	one, two, legacy := note(repo1), note(repo2), note("")
	offered := func(repo, head string) []int64 {
		t.Helper()
		ms, err := ops.MessagesToMark(ctx, e, repo, head, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return msgIDs(ms)
	}
	if got := offered(repo1, head1); !slices.Equal(got, []int64{one, legacy}) {
		t.Fatalf("offered to repo1: %v", got)
	}
	if got := offered(repo2, head2); !slices.Equal(got, []int64{two, legacy}) {
		t.Fatalf("offered to repo2: %v", got)
	}
	// repo1 does not hold the legacy note: no mark, not offered again at
	// that HEAD; repo2 still gets it, and adopts it.
	if err := ops.PutBreadcrumbMarks(ctx, e, repo1, head1, map[int64][]engine.BreadcrumbMark{one: mark(engine.MarkValid, "x.go")}); err != nil {
		t.Fatal(err)
	}
	if err := ops.PutBreadcrumbMarks(ctx, e, "", head1, map[int64][]engine.BreadcrumbMark{legacy: nil}); err != nil {
		t.Fatal(err)
	}
	if got := offered(repo1, head1); len(got) != 0 {
		t.Fatalf("offered to repo1 again at the same HEAD: %v", got)
	}
	if m, _ := e.GetMessage(ctx, legacy); m.BreadcrumbCheck != nil {
		t.Fatalf("a note of no known repository has a check: %+v", m.BreadcrumbCheck)
	}
	if err := ops.PutBreadcrumbMarks(ctx, e, repo2, head2, map[int64][]engine.BreadcrumbMark{two: mark(engine.MarkGone, "x.go"), legacy: mark(engine.MarkValid, "x.go")}); err != nil {
		t.Fatal(err)
	}
	if got := offered(repo1, strings.Repeat("e", 40)); !slices.Equal(got, []int64{one}) {
		t.Fatalf("after adoption by repo2, offered to repo1 at a new HEAD: %v", got)
	}
	// repo1's HEAD moves: only its note goes stale.
	h.setRepo(repo1, strings.Repeat("e", 40))
	want := map[int64]string{one: engine.CheckStale, two: engine.CheckCurrent, legacy: engine.CheckCurrent}
	for id, status := range want {
		m, err := e.GetMessage(ctx, id)
		if err != nil || m.BreadcrumbCheck == nil || m.BreadcrumbCheck.Status != status {
			t.Fatalf("#%d: %+v %v, want %s", id, m.BreadcrumbCheck, err, status)
		}
	}
	// repo2 leaves the machine: its notes keep their last marks.
	h.setRepo(repo2, "")
	m, _ := e.GetMessage(ctx, two)
	if c := m.BreadcrumbCheck; c == nil || c.Status != engine.CheckUnreachable || c.Repo != repo2 || c.CheckedAt != head2 || len(c.Marks) != 1 || c.Marks[0].State != engine.MarkGone {
		t.Fatalf("unreachable repository: %+v", c)
	}
}
