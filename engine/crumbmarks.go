package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// BreadcrumbRepos reads the HEAD of the git repositories breadcrumbs are
// checked against. The engine reads git through it only: the checks
// themselves run outside the engine and are handed in with
// ops.PutBreadcrumbMarks. Head is called on every search and message read that
// may attach marks, once per repository among the results, so it must be
// cheap (a file read, not a walk of the history). It must not depend on the
// working directory of the process: marks are the same whichever
// repository the reading process runs in.
type BreadcrumbRepos interface {
	// Head returns the commit HEAD names in the repository whose top
	// directory is root. An error means the repository is not reachable
	// from this machine (moved, removed, another machine's path): its
	// notes keep their last marks.
	Head(root string) (string, error)
}

// RepoKey is the metadata key that records the repository a message's
// breadcrumbs were written in: the absolute path of its top directory.
// Live writes (StoreMessage, WriteNote) stamp Options.BreadcrumbRepo under
// it when the message has breadcrumbs and names none; imports keep what
// the message carried.
const RepoKey = "breadcrumbs_repo"

// BreadcrumbRepo returns the repository m's breadcrumbs were written in
// (metadata breadcrumbs_repo), "" when it recorded none.
func (m Message) BreadcrumbRepo() string {
	var md map[string]json.RawMessage
	_ = json.Unmarshal(m.Metadata, &md) // stored metadata was validated on write
	var repo string
	_ = json.Unmarshal(md[RepoKey], &repo)
	return repo
}

// checkRepo checks a repository root as RepoKey holds it.
func checkRepo(field, root string) error {
	switch {
	case !filepath.IsAbs(root):
		return invalid(field, "must be the absolute path of a repository's top directory, got %q", root)
	case len(root) > maxBreadcrumbBytes:
		return invalid(field, "must be at most %d bytes", maxBreadcrumbBytes)
	case !utf8.ValidString(root) || strings.ContainsAny(root, "\x00\n\r"):
		return invalid(field, "must be one line of valid UTF-8")
	}
	return nil
}

// MarkState is what a check found of one breadcrumb.
type MarkState string

// Mark states.
const (
	MarkValid   MarkState = "valid"   // still true at HEAD
	MarkMoved   MarkState = "moved"   // the file was renamed (MovedTo); its range is unchanged
	MarkChanged MarkState = "changed" // the line range's text changed, or is past the end of the file
	MarkGone    MarkState = "gone"    // the file or commit is not at HEAD / not reachable
	MarkForm    MarkState = "form"    // not checkable offline; its form was checked on write
)

// BreadcrumbMark is one breadcrumb's check.
type BreadcrumbMark struct {
	Kind    string    `json:"kind"`
	Ref     string    `json:"ref"`
	State   MarkState `json:"state"`
	MovedTo string    `json:"moved_to,omitempty"`
	Reason  string    `json:"reason,omitempty"`
}

// Breadcrumb check statuses (BreadcrumbCheck.Status).
const (
	// CheckCurrent: Marks were computed at the repository's HEAD.
	CheckCurrent = "current"
	// CheckStale: the cache holds marks of another commit (CheckedAt) and
	// none of HEAD yet; a refresh (cairn check --breadcrumbs, or cairn
	// serve / cairn mcp in the background) is due. No marks are given:
	// those of another commit may be wrong now.
	CheckStale = "stale"
	// CheckUnreachable: the repository is not reachable from this
	// machine; Marks are those of the last check (at CheckedAt), kept
	// rather than called gone.
	CheckUnreachable = "unreachable"
)

// BreadcrumbCheck is what the marks cache says of a message's breadcrumbs
// at the current HEAD of the repository they were written in (Repo). Reads
// attach it to messages with breadcrumbs that were checked there; a message
// never checked, or whose repository is unknown, has none.
type BreadcrumbCheck struct {
	Status    string           `json:"status"`
	Repo      string           `json:"repo"`
	Head      string           `json:"head,omitempty"`
	CheckedAt string           `json:"checked_at,omitempty"`
	Marks     []BreadcrumbMark `json:"marks,omitempty"`
}

// worstOf ranks marks for the cache's worst column: 0 every breadcrumb
// valid (or form only), 1 some moved, 2 some changed or gone.
func worstOf(marks []BreadcrumbMark) int {
	w := 0
	for _, m := range marks {
		switch m.State {
		case MarkMoved:
			w = max(w, 1)
		case MarkChanged, MarkGone:
			w = 2
		}
	}
	return w
}

// staleWorst is the worst value a note's score is demoted at
// (Ranking.StaleFactor): changed or gone. A moved file still says what the
// note said, under another name.
const staleWorst = 2

var headRE = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

func checkHead(head string) error {
	if !headRE.MatchString(head) {
		return invalid("head", "must be a full commit hash (40 or 64 lower-case hex digits), got %q", head)
	}
	return nil
}

// RepoHeads are the current HEADs of the repositories marks were computed
// in, as one search or read sees them: each repository's HEAD is read once
// (through Options.BreadcrumbRepos) and kept for the rest of the request.
// Safe for concurrent use.
type RepoHeads struct {
	repos BreadcrumbRepos
	mu    struct {
		sync.Mutex
		heads map[string]string // root -> HEAD, "" when not reachable
	}
}

func (e *Engine) repoHeads() *RepoHeads {
	h := &RepoHeads{repos: e.opts.BreadcrumbRepos}
	h.mu.heads = map[string]string{}
	return h
}

// head returns root's HEAD, "" when it is not reachable from this machine.
func (h *RepoHeads) head(root string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.mu.heads[root]
	if !ok {
		if h.repos != nil {
			if got, err := h.repos.Head(root); err == nil && checkHead(got) == nil {
				v = got
			}
		}
		h.mu.heads[root] = v
	}
	return v
}

// markNow says how a cached row stands at its repository's current HEAD:
// scoped is false for a row of a message whose repository is unknown (no
// mark), current is true when the row's marks hold now (checked at the
// repository's HEAD, or the repository is not reachable and the last
// marks stand).
func (h *RepoHeads) markNow(r MarkRow) (scoped, current bool, head string) {
	if r.Repo == "" {
		return false, false, ""
	}
	head = h.head(r.Repo)
	return true, head == "" || head == r.Head, head
}

// Reached returns the HEAD of each repository h has read that is
// reachable from this machine, by its top directory: a store renders
// ValidAt from it (nil h: none read).
func (h *RepoHeads) Reached() map[string]string {
	out := map[string]string{}
	if h == nil {
		return out
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for root, head := range h.mu.heads {
		if head != "" {
			out[root] = head
		}
	}
	return out
}

// ValidNow reports whether r's marks hold now and say every breadcrumb is
// valid: the breadcrumbs_valid filter (Selection.ValidAt) of one message.
func (h *RepoHeads) ValidNow(r MarkRow) bool {
	_, current, _ := h.markNow(r)
	return current && r.Worst == 0
}

// MarkRows validates the marks of messages checked in the repository whose
// top directory is repo, at its HEAD head, and encodes them as the rows of
// the marks cache (Store.PutMarks). repo "" records that the messages
// were tried at head and none of their breadcrumbs is in that repository.
func MarkRows(repo, head string, marks map[int64][]BreadcrumbMark) (map[int64]MarkRow, error) {
	if err := checkHead(head); err != nil {
		return nil, err
	}
	if repo != "" {
		if err := checkRepo("repo", repo); err != nil {
			return nil, err
		}
	}
	for id, ms := range marks {
		for _, m := range ms {
			switch m.State {
			case MarkValid, MarkMoved, MarkChanged, MarkGone, MarkForm:
			default:
				return nil, invalid("state", "message %d: must be valid, moved, changed, gone or form, got %q", id, m.State)
			}
		}
	}
	rows := make(map[int64]MarkRow, len(marks))
	for id, ms := range marks {
		if ms == nil {
			ms = []BreadcrumbMark{}
		}
		b, err := json.Marshal(ms)
		if err != nil {
			return nil, fmt.Errorf("engine: put breadcrumb marks: %w", err)
		}
		rows[id] = MarkRow{Repo: repo, Head: head, Worst: worstOf(ms), Marks: string(b)}
	}
	return rows, nil
}

// CheckMarkPage validates a page of the messages to mark in the
// repository whose top directory is repo at its HEAD head
// (Store.MessagesToMark), and returns its limit (0 means DefaultLimit).
func CheckMarkPage(repo, head string, limit int) (int, error) {
	if err := checkHead(head); err != nil {
		return 0, err
	}
	if err := checkRepo("repo", repo); err != nil {
		return 0, err
	}
	return checkLimit(limit, DefaultLimit)
}

// attachChecks sets the BreadcrumbCheck of the messages with breadcrumbs
// that the cache holds, at the current HEAD of each one's repository: one
// indexed lookup of at most len(ms) rows, and no git beyond reading the
// HEADs.
func (e *Engine) attachChecks(ctx context.Context, ms []*Message) error {
	var ids []int64
	for _, m := range ms {
		if m.HasBreadcrumbs {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := e.store.Marks(ctx, ids)
	if err != nil {
		return err
	}
	heads := e.repoHeads()
	checks := map[int64]*BreadcrumbCheck{}
	for id, r := range rows {
		scoped, current, head := heads.markNow(r)
		if !scoped {
			continue
		}
		c := &BreadcrumbCheck{Status: CheckStale, Repo: r.Repo, Head: head, CheckedAt: r.Head}
		switch {
		case head == "":
			c.Status = CheckUnreachable
		case current:
			c.Status, c.CheckedAt = CheckCurrent, ""
		}
		if current {
			if err := json.Unmarshal([]byte(r.Marks), &c.Marks); err != nil {
				return fmt.Errorf("%w: breadcrumb marks of message %d: %v", ErrCorrupt, id, err)
			}
		}
		checks[id] = c
	}
	for _, m := range ms {
		m.BreadcrumbCheck = checks[m.ID]
	}
	return nil
}

// attachResultChecks is attachChecks for search results.
func (e *Engine) attachResultChecks(ctx context.Context, rs []SearchResult) error {
	ms := make([]*Message, len(rs))
	for i := range rs {
		ms[i] = &rs[i].Message
	}
	return e.attachChecks(ctx, ms)
}

// staleAmong returns the ids among ids whose marks hold now (at their
// repository's HEAD, or the last ones of an unreachable repository) and
// say a breadcrumb changed or is gone.
func (e *Engine) staleAmong(ctx context.Context, heads *RepoHeads, ids []int64) (map[int64]bool, error) {
	return e.marksAmong(ctx, heads, ids, func(worst int) bool { return worst >= staleWorst })
}

// validAmong returns the ids among ids whose marks hold now and say every
// breadcrumb is valid.
func (e *Engine) validAmong(ctx context.Context, heads *RepoHeads, ids []int64) (map[int64]bool, error) {
	return e.marksAmong(ctx, heads, ids, func(worst int) bool { return worst == 0 })
}

func (e *Engine) marksAmong(ctx context.Context, heads *RepoHeads, ids []int64, keep func(worst int) bool) (map[int64]bool, error) {
	out := make(map[int64]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := e.store.Marks(ctx, ids)
	if err != nil {
		return nil, err
	}
	for id, r := range rows {
		if _, current, _ := heads.markNow(r); current && keep(r.Worst) {
			out[id] = true
		}
	}
	return out, nil
}
