package enginetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
)

// MovableHeads are repositories whose HEADs a test moves; a repository
// without a HEAD is not reachable.
type MovableHeads struct {
	mu    sync.Mutex
	heads map[string]string
}

// Head is root's HEAD, or an error when the test gave it none.
func (h *MovableHeads) Head(root string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if v := h.heads[root]; v != "" {
		return v, nil
	}
	return "", errors.New("not reachable")
}

// Set moves Repo1's HEAD.
func (h *MovableHeads) Set(s string) { h.SetRepo(Repo1, s) }

// SetRepo moves root's HEAD.
func (h *MovableHeads) SetRepo(root, head string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.heads == nil {
		h.heads = map[string]string{}
	}
	h.heads[root] = head
}

// The repositories and HEADs of the breadcrumb marks' tests.
var (
	Head1 = strings.Repeat("a", 40)
	Head2 = strings.Repeat("b", 40)
	Repo1 = "/src/one"
	Repo2 = "/src/two"
)

// MarksFixture writes three notes about the same thing with a file
// breadcrumb each, and one without breadcrumbs, with vectors, on an engine whose
// repository is Repo1 at Head1.
func MarksFixture(t testing.TB) (*engine.Engine, *MovableHeads, [4]int64) {
	t.Helper()
	h := &MovableHeads{}
	h.Set(Head1)
	e := OpenDir(t, t.TempDir(), engine.Options{Embedder: NewHashEmbedder("hash-m", 32), BreadcrumbRepos: h, BreadcrumbRepo: Repo1})
	var ids [4]int64
	for i := range 3 {
		ids[i] = MustNote(t, e, engine.NewNote{Agent: "bob", Content: fmt.Sprintf("retry loop backoff note %d", i),
			Breadcrumbs: engine.Breadcrumbs{Files: []string{fmt.Sprintf("f%d.go:1-3", i)}}})
	}
	ids[3] = MustNote(t, e, engine.NewNote{Agent: "bob", Content: "retry loop backoff note without breadcrumbs"})
	if err := ops.SyncVectors(context.Background(), e, nil); err != nil {
		t.Fatal(err)
	}
	return e, h, ids
}

// Mark is one file breadcrumb's mark.
func Mark(state engine.MarkState, ref string) []engine.BreadcrumbMark {
	return []engine.BreadcrumbMark{{Kind: "files", Ref: ref, State: state}}
}

// Search validates req as the surfaces do and runs it, failing the test
// on an error.
func Search(t testing.TB, e *engine.Engine, req engine.SearchRequest) []engine.SearchResult {
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
