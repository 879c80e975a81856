package gitcrumbs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// State is what a check found of one breadcrumb.
type State string

// States.
const (
	Valid   State = "valid"   // still true at HEAD
	Moved   State = "moved"   // the file was renamed (MovedTo); its range is unchanged
	Changed State = "changed" // the line range's text changed, or it is past the end of the file
	Gone    State = "gone"    // the file or commit is not at HEAD / not reachable
	Form    State = "form"    // not checkable offline; its form was checked on write
)

// Result is one breadcrumb's check.
type Result struct {
	MessageID int64  `json:"message_id"`
	Repo      string `json:"repo,omitempty"`
	Kind      string `json:"kind"`
	Ref       string `json:"ref"`
	State     State  `json:"state"`
	MovedTo   string `json:"moved_to,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// pathKinds are the kinds whose values are paths in the repository.
var pathKinds = []string{"files", "modified_files", "created_files", "config_files", "tests", "documentation", "logs"}

// ErrNoRepo is returned by Open for a directory that is not in a git
// repository.
var ErrNoRepo = errors.New("gitcrumbs: not a git repository")

// Checker checks breadcrumbs against one repository's HEAD.
type Checker struct {
	repo *git.Repository
	root string
	head *object.Commit
	tree *object.Tree

	history []dated                             // HEAD's reachable commits, oldest first (loaded once)
	reach   map[plumbing.Hash]bool              // the same as a set
	renames map[plumbing.Hash]map[string]string // base commit -> old path -> path at HEAD
	lines   map[plumbing.Hash][]string          // blob -> its lines (bounded by maxCachedBlobs)
	commits map[string]*object.Commit           // commit breadcrumb -> its commit (nil: none)
	trees   map[plumbing.Hash]*object.Tree      // commit -> its tree
	files   map[treePath]treeFile               // a path's file in a tree (or why not)
}

type treePath struct {
	tree plumbing.Hash
	path string
}

type treeFile struct {
	f   *object.File
	err error
}

// file returns the file at path p in tree t. Notes point at the same
// files again and again: each lookup walks and decodes tree objects, so
// it is done once per tree and path (bounded like the blobs).
func (c *Checker) file(t *object.Tree, p string) (*object.File, error) {
	k := treePath{t.Hash, p}
	if e, ok := c.files[k]; ok {
		return e.f, e.err
	}
	f, err := t.File(p)
	if len(c.files) >= maxCachedFiles {
		clear(c.files)
	}
	c.files[k] = treeFile{f, err}
	return f, err
}

// treeOf returns cm's tree, decoded once.
func (c *Checker) treeOf(cm *object.Commit) (*object.Tree, error) {
	if t, ok := c.trees[cm.Hash]; ok {
		return t, nil
	}
	t, err := cm.Tree()
	if err != nil {
		return nil, err
	}
	if len(c.trees) >= maxCachedBlobs {
		clear(c.trees)
	}
	c.trees[cm.Hash] = t
	return t, nil
}

// maxCachedFiles bounds the path lookups a Checker keeps.
const maxCachedFiles = 1 << 16

// maxCachedBlobs bounds the blobs whose lines a Checker keeps: notes
// point at the same files again and again, and a blob is read and split
// once rather than per breadcrumb.
const maxCachedBlobs = 4096

// fileLines returns f's lines, from the cache when it can.
func (c *Checker) fileLines(f *object.File) ([]string, error) {
	if l, ok := c.lines[f.Hash]; ok {
		return l, nil
	}
	l, err := f.Lines()
	if err != nil {
		return nil, err
	}
	if len(c.lines) >= maxCachedBlobs {
		clear(c.lines)
	}
	c.lines[f.Hash] = l
	return l, nil
}

type dated struct {
	when time.Time
	hash plumbing.Hash
}

// Open opens the repository containing dir and reads its HEAD.
func Open(dir string) (*Checker, error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, fmt.Errorf("%w: %s", ErrNoRepo, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("gitcrumbs: open %s: %w", dir, err)
	}
	c := &Checker{repo: repo, renames: map[plumbing.Hash]map[string]string{}, lines: map[plumbing.Hash][]string{}, commits: map[string]*object.Commit{}, trees: map[plumbing.Hash]*object.Tree{}, files: map[treePath]treeFile{}}
	if wt, err := repo.Worktree(); err == nil {
		c.root = wt.Filesystem.Root()
	}
	ref, err := repo.Head()
	if err != nil {
		return nil, fmt.Errorf("gitcrumbs: HEAD of %s: %w", dir, err)
	}
	if c.head, err = repo.CommitObject(ref.Hash()); err != nil {
		return nil, fmt.Errorf("gitcrumbs: HEAD commit: %w", err)
	}
	if c.tree, err = c.head.Tree(); err != nil {
		return nil, fmt.Errorf("gitcrumbs: HEAD tree: %w", err)
	}
	return c, nil
}

// Head is the commit checked against.
func (c *Checker) Head() string { return c.head.Hash.String() }

// loadHistory reads every commit reachable from HEAD, once.
func (c *Checker) loadHistory(ctx context.Context) error {
	if c.reach != nil {
		return nil
	}
	it, err := c.repo.Log(&git.LogOptions{From: c.head.Hash})
	if err != nil {
		return fmt.Errorf("gitcrumbs: history: %w", err)
	}
	reach := map[plumbing.Hash]bool{}
	var hist []dated
	err = it.ForEach(func(cm *object.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		reach[cm.Hash] = true
		hist = append(hist, dated{cm.Committer.When, cm.Hash})
		return nil
	})
	if err != nil {
		return fmt.Errorf("gitcrumbs: history: %w", err)
	}
	sort.SliceStable(hist, func(i, j int) bool { return hist[i].when.Before(hist[j].when) })
	c.history, c.reach = hist, reach
	return nil
}

// resolve returns the commit a (possibly abbreviated) hash names.
func (c *Checker) resolve(ref string) (*object.Commit, error) {
	if cm, ok := c.commits[ref]; ok {
		if cm == nil {
			return nil, plumbing.ErrObjectNotFound
		}
		return cm, nil
	}
	var cm *object.Commit
	h, err := c.repo.ResolveRevision(plumbing.Revision(ref))
	if err == nil {
		cm, err = c.repo.CommitObject(*h)
	}
	if len(c.commits) >= maxCachedBlobs {
		clear(c.commits)
	}
	c.commits[ref] = cm
	return cm, err
}

// base is the commit a message's file breadcrumbs are compared from: its
// first commit breadcrumb reachable from HEAD, else the newest commit of
// HEAD's history at or before the message's time; nil when there is none.
func (c *Checker) base(m engine.Message) *object.Commit {
	for _, ref := range m.Breadcrumbs().Commits {
		if cm, err := c.resolve(ref); err == nil && c.reach[cm.Hash] {
			return cm
		}
	}
	i := sort.Search(len(c.history), func(i int) bool { return c.history[i].when.After(m.CreatedAt) })
	if i == 0 {
		return nil
	}
	cm, err := c.repo.CommitObject(c.history[i-1].hash)
	if err != nil {
		return nil
	}
	return cm
}

// renamesFrom maps the paths of base's tree that HEAD has under another
// name to that name.
func (c *Checker) renamesFrom(ctx context.Context, base *object.Commit) (map[string]string, error) {
	if r, ok := c.renames[base.Hash]; ok {
		return r, nil
	}
	bt, err := c.treeOf(base)
	if err != nil {
		return nil, err
	}
	changes, err := object.DiffTreeWithOptions(ctx, bt, c.tree, object.DefaultDiffTreeOptions)
	if err != nil {
		return nil, err
	}
	r := map[string]string{}
	for _, ch := range changes {
		if ch.From.Name != "" && ch.To.Name != "" && ch.From.Name != ch.To.Name {
			r[ch.From.Name] = ch.To.Name
		}
	}
	c.renames[base.Hash] = r
	return r, nil
}

// Check checks every breadcrumb of m.
func (c *Checker) Check(ctx context.Context, m engine.Message) ([]Result, error) {
	if err := c.loadHistory(ctx); err != nil {
		return nil, err
	}
	bc := m.Breadcrumbs()
	kinds := map[string][]string{"files": bc.Files, "commits": bc.Commits, "issues": bc.Issues, "prs": bc.PRs}
	for k, v := range bc.Other {
		kinds[k] = v
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	slices.Sort(names)
	base := c.base(m)
	var out []Result
	for _, kind := range names {
		for _, ref := range kinds[kind] {
			r := Result{MessageID: m.ID, Kind: kind, Ref: ref, State: Form}
			var err error
			switch {
			case kind == "commits":
				c.checkCommit(&r)
			case kind == "deleted_files":
				c.checkDeleted(&r)
			case slices.Contains(pathKinds, kind) && !strings.Contains(ref, "://"):
				err = c.checkPath(ctx, &r, base)
			}
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func (c *Checker) checkCommit(r *Result) {
	cm, err := c.resolve(r.Ref)
	switch {
	case err != nil:
		r.State, r.Reason = Gone, "no such commit in the repository"
	case !c.reach[cm.Hash]:
		r.State, r.Reason = Gone, "not reachable from HEAD (history rewritten?)"
	default:
		r.State = Valid
	}
}

// relPath turns a breadcrumb path into a path in the repository's tree.
func (c *Checker) relPath(p string) (string, bool) {
	if filepath.IsAbs(p) {
		if c.root == "" {
			return "", false
		}
		rel, err := filepath.Rel(c.root, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			return "", false
		}
		p = rel
	}
	return strings.TrimPrefix(filepath.ToSlash(filepath.Clean(p)), "./"), true
}

func (c *Checker) checkDeleted(r *Result) {
	path, _, _, _ := engine.SplitPathRef(r.Ref)
	p, ok := c.relPath(path)
	if !ok {
		r.Reason = "outside the repository"
		return
	}
	if _, err := c.file(c.tree, p); err == nil {
		r.State, r.Reason = Changed, "exists again at HEAD"
		return
	}
	r.State = Valid
}

func (c *Checker) checkPath(ctx context.Context, r *Result, base *object.Commit) error {
	path, from, to, _ := engine.SplitPathRef(r.Ref)
	p, ok := c.relPath(path)
	if !ok {
		r.Reason = "outside the repository"
		return nil
	}
	now := p
	f, err := c.file(c.tree, p)
	if err != nil {
		if base == nil {
			r.State, r.Reason = Gone, "not at HEAD"
			return nil
		}
		ren, err := c.renamesFrom(ctx, base)
		if err != nil {
			return fmt.Errorf("gitcrumbs: renames since %s: %w", base.Hash, err)
		}
		moved, ok := ren[p]
		if !ok {
			r.State, r.Reason = Gone, "not at HEAD"
			return nil
		}
		if f, err = c.file(c.tree, moved); err != nil {
			r.State, r.Reason = Gone, "not at HEAD"
			return nil
		}
		now, r.MovedTo = moved, moved
	}
	r.State = Valid
	if now != p {
		r.State = Moved
	}
	if from == 0 {
		return nil
	}
	lines, err := c.fileLines(f)
	if err != nil {
		return fmt.Errorf("gitcrumbs: read %s: %w", now, err)
	}
	if to > len(lines) {
		r.State, r.Reason = Changed, fmt.Sprintf("lines %d-%d past the end of the file (%d lines)", from, to, len(lines))
		return nil
	}
	if base == nil {
		return nil
	}
	bt, err := c.treeOf(base)
	if err != nil {
		return fmt.Errorf("gitcrumbs: tree of %s: %w", base.Hash, err)
	}
	bf, err := c.file(bt, p)
	if err != nil {
		return nil // the file is newer than the base: nothing to compare with
	}
	old, err := c.fileLines(bf)
	if err != nil {
		return fmt.Errorf("gitcrumbs: read %s at %s: %w", p, base.Hash, err)
	}
	if to > len(old) || !slices.Equal(old[from-1:to], lines[from-1:to]) {
		r.State, r.Reason = Changed, fmt.Sprintf("lines %d-%d changed since %s", from, to, base.Hash.String()[:12])
	}
	return nil
}

// Report sums up the checks of many messages.
type Report struct {
	// Repo and Head are the repository the check ran in (where
	// messages that recorded no repository are tried) and its HEAD.
	Repo string `json:"repo"`
	Head string `json:"head"`
	// Repos are the repositories checked against, with their HEADs.
	Repos    map[string]string `json:"repos"`
	Messages int               `json:"messages"`
	// Checked counts the breadcrumbs checked against the repository (files
	// and commits); Valid those still valid. Rate is Valid/Checked (1 when
	// nothing was checked).
	Checked int     `json:"checked"`
	Valid   int     `json:"valid"`
	Rate    float64 `json:"validity_rate"`
	// States counts every breadcrumb by state, Form included.
	States map[State]int `json:"states"`
	// Stale lists the moved, changed and gone breadcrumbs.
	Stale []Result `json:"stale"`
	// Unreachable counts the messages whose repository is not reachable
	// from this machine (their last marks stand); Unscoped those that
	// recorded no repository and were not found in this one (no mark).
	Unreachable int `json:"unreachable"`
	Unscoped    int `json:"unscoped"`
}

// Add counts the results of one message checked in the repository root.
func (rep *Report) Add(root string, rs []Result) {
	if rep.States == nil {
		rep.States = map[State]int{}
	}
	rep.Messages++
	for _, r := range rs {
		rep.States[r.State]++
		if r.State == Form {
			continue
		}
		rep.Checked++
		if r.State == Valid {
			rep.Valid++
		} else {
			r.Repo = root
			rep.Stale = append(rep.Stale, r)
		}
	}
	rep.Rate = 1
	if rep.Checked > 0 {
		rep.Rate = float64(rep.Valid) / float64(rep.Checked)
	}
}
