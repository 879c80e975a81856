package gitcrumbs

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
)

// Repos reads the HEAD of a repository by its top directory: it satisfies
// engine.BreadcrumbRepos. It depends on the paths it is given only, never
// on the process's working directory, so every process on a machine sees
// the same HEADs. Safe for concurrent use.
type Repos struct{}

// Head returns the HEAD commit of the repository whose top directory is
// root; an error when root is not (or no longer) one.
func (Repos) Head(root string) (string, error) {
	hf, err := repoAt(root)
	if err != nil {
		return "", err
	}
	return hf.Head()
}

// repoAt is the HeadFile of the repository whose top directory is root.
func repoAt(root string) (*HeadFile, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("%w: %q is not an absolute path", ErrNoRepo, root)
	}
	hf, err := FindRepo(root)
	if err != nil {
		return nil, err
	}
	if hf.Root() != filepath.Clean(root) {
		return nil, fmt.Errorf("%w: %s is not a repository's top directory", ErrNoRepo, root)
	}
	return hf, nil
}

// Marker checks messages against the repository each was written in and
// stores their marks: the one a message recorded (engine.RepoKey), else the
// one a check adopted it into, else (a message written before repositories
// were recorded) the repository the process runs in, which adopts it when
// any of its files or commits is found there (or it has only breadcrumbs
// no repository holds: issues, URLs). Each repository is opened once; one
// not reachable from this machine is skipped, and its messages keep their
// last marks. Not safe for concurrent use.
type Marker struct {
	here     string              // top directory of the process's repository; "" none
	checkers map[string]*Checker // by top directory; nil: not reachable
}

// NewMarker returns a Marker whose process runs in the repository whose
// top directory is here ("" for none: messages that recorded no
// repository are then left as they are).
func NewMarker(here string) *Marker {
	return &Marker{here: here, checkers: map[string]*Checker{}}
}

// checker returns the Checker of root, nil when it is not reachable.
func (mk *Marker) checker(root string) (*Checker, error) {
	if c, seen := mk.checkers[root]; seen {
		return c, nil
	}
	var c *Checker
	if _, err := repoAt(root); err == nil {
		if c, err = Open(root); err != nil {
			return nil, err
		}
	}
	mk.checkers[root] = c
	return c, nil
}

// adopts reports whether the repository a check ran in holds a message that
// recorded none: some file or commit of it is there (whatever its state but
// gone), or it has no breadcrumb a repository holds.
func adopts(rs []Result) bool {
	for _, r := range rs {
		if r.State != Gone && r.State != Form {
			return true
		}
	}
	for _, r := range rs {
		if r.State != Form {
			return false
		}
	}
	return true
}

// Mark checks ms, stores their marks and adds them to rep.
func (mk *Marker) Mark(ctx context.Context, eng *engine.Engine, ms []engine.Message, rep *Report) error {
	ids := make([]int64, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	cached, err := ops.CachedMarks(ctx, eng, ids)
	if err != nil {
		return err
	}
	type batch struct {
		head  string
		marks map[int64][]engine.BreadcrumbMark
	}
	byRepo := map[string]*batch{}
	put := func(root, head string, id int64, marks []engine.BreadcrumbMark) {
		b := byRepo[root]
		if b == nil {
			b = &batch{head: head, marks: map[int64][]engine.BreadcrumbMark{}}
			byRepo[root] = b
		}
		b.marks[id] = marks
		if root != "" {
			if rep.Repos == nil {
				rep.Repos = map[string]string{}
			}
			rep.Repos[root] = head
		}
	}
	for _, m := range ms {
		root, adopted := m.BreadcrumbRepo(), true
		if root == "" {
			root = cached[m.ID].Repo
		}
		if root == "" {
			root, adopted = mk.here, false
		}
		if root == "" {
			rep.Unscoped++
			continue
		}
		c, err := mk.checker(root)
		if err != nil {
			return err
		}
		if c == nil {
			rep.Unreachable++
			continue
		}
		rs, err := c.Check(ctx, m)
		if err != nil {
			return err
		}
		if !adopted && !adopts(rs) {
			// Tried here at this HEAD, not found: no mark, not tried
			// here again until HEAD moves.
			rep.Unscoped++
			put("", c.Head(), m.ID, nil)
			continue
		}
		rep.Add(root, rs)
		put(root, c.Head(), m.ID, Marks(rs))
	}
	for root, b := range byRepo {
		if err := ops.PutBreadcrumbMarks(ctx, eng, root, b.head, b.marks); err != nil {
			return err
		}
	}
	return nil
}
