package gitcrumbs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// HeadFile reads a repository's HEAD commit from its files: HEAD, the
// loose ref it names, else packed-refs. A read is a few small file reads
// and never walks objects, so every search and message read can ask for
// it (it satisfies engine.BreadcrumbHead). Safe for concurrent use.
type HeadFile struct {
	root      string // the work tree
	gitDir    string // HEAD lives here (a linked worktree's own dir)
	commonDir string // refs and packed-refs live here
}

// FindRepo returns the HeadFile of the repository containing dir (dir or
// its nearest parent with a .git directory or file).
func FindRepo(dir string) (*HeadFile, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("gitcrumbs: %w", err)
	}
	for d := abs; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		st, err := os.Stat(dotgit)
		if err == nil {
			return headFileAt(d, dotgit, st.IsDir())
		}
		if filepath.Dir(d) == d {
			return nil, fmt.Errorf("%w: %s", ErrNoRepo, dir)
		}
	}
}

func headFileAt(root, dotgit string, isDir bool) (*HeadFile, error) {
	h := &HeadFile{root: root, gitDir: dotgit}
	if !isDir {
		// A linked worktree or submodule: ".git" is a file "gitdir: PATH".
		b, err := os.ReadFile(dotgit)
		if err != nil {
			return nil, fmt.Errorf("gitcrumbs: %w", err)
		}
		p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return nil, fmt.Errorf("%w: %s is not a gitdir file", ErrNoRepo, dotgit)
		}
		p = strings.TrimSpace(p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		h.gitDir = p
	}
	h.commonDir = h.gitDir
	if b, err := os.ReadFile(filepath.Join(h.gitDir, "commondir")); err == nil {
		p := strings.TrimSpace(string(b))
		if !filepath.IsAbs(p) {
			p = filepath.Join(h.gitDir, p)
		}
		h.commonDir = p
	}
	return h, nil
}

// Root is the repository's work tree.
func (h *HeadFile) Root() string { return h.root }

var hashRE = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// errNoHead is HEAD that names no commit (an unborn branch, a broken ref).
var errNoHead = errors.New("gitcrumbs: HEAD names no commit")

// Head returns the commit HEAD names, following symbolic refs.
func (h *HeadFile) Head() (string, error) {
	ref := "HEAD"
	for range 5 {
		v, err := h.readRef(ref)
		if err != nil {
			return "", err
		}
		next, sym := strings.CutPrefix(v, "ref:")
		if !sym {
			if !hashRE.MatchString(v) {
				return "", fmt.Errorf("%w: %s is %q", errNoHead, ref, v)
			}
			return v, nil
		}
		ref = strings.TrimSpace(next)
	}
	return "", fmt.Errorf("%w: symbolic refs nested too deep", errNoHead)
}

// readRef returns a ref's value: its loose file (HEAD in the worktree's
// own dir, others in the common dir), else its line in packed-refs.
func (h *HeadFile) readRef(ref string) (string, error) {
	if !filepath.IsLocal(filepath.FromSlash(ref)) {
		return "", fmt.Errorf("%w: ref %q", errNoHead, ref)
	}
	dirs := []string{h.commonDir}
	if ref == "HEAD" || !strings.HasPrefix(ref, "refs/") {
		dirs = []string{h.gitDir}
	}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(ref)))
		if err == nil {
			return strings.TrimSpace(string(b)), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("gitcrumbs: read %s: %w", ref, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(h.commonDir, "packed-refs"))
	if err != nil {
		return "", fmt.Errorf("%w: %s not found", errNoHead, ref)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		hash, name, ok := strings.Cut(sc.Text(), " ")
		if ok && name == ref {
			return hash, nil
		}
	}
	return "", fmt.Errorf("%w: %s not found", errNoHead, ref)
}
