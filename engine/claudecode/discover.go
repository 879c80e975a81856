package claudecode

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// File is one session file found by Discover.
type File struct {
	Path    string // absolute path
	Rel     string // path relative to the root, with '/' separators
	Project string // the project folder's name (encoded working directory)
	Stem    string // file name without .jsonl: a session id or agent-<id>
	Size    int64
}

// SessionID returns the file's stem when it is a session id, or "".
func (f File) SessionID() string {
	if ValidUUID(f.Stem) {
		return strings.ToLower(f.Stem)
	}
	return ""
}

// DefaultRoot returns Claude Code's projects folder: $CLAUDE_CONFIG_DIR/projects
// when that variable is set, else ~/.claude/projects. getenv is os.Getenv
// in production.
func DefaultRoot(getenv func(string) string) (string, error) {
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, "projects"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("claudecode: no home directory: %w", err)
		}
		home = h
	}
	return filepath.Join(home, ".claude", "projects"), nil
}

// Excluded reports whether a file matches one of the exclusion globs. A
// glob (path.Match syntax) is matched against the file's path relative to
// the root ("-home-me-secret/0a1b....jsonl"), its project folder name and
// its stem (the session id), so "-home-me-secret*", "*/agent-*.jsonl" and a
// bare session id all work.
func Excluded(f File, globs []string) bool {
	for _, g := range globs {
		for _, s := range []string{f.Rel, f.Project, f.Stem} {
			if ok, _ := path.Match(g, s); ok {
				return true
			}
		}
	}
	return false
}

// ValidateGlobs reports the first malformed glob.
func ValidateGlobs(globs []string) error {
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("claudecode: exclusion glob %q: %w", g, err)
		}
	}
	return nil
}

// Discover lists the *.jsonl files below root, at any depth (project
// folders, and {session}/subagents/ folders), sorted by project then path, with
// the ones matching exclude left out. Within a project, agent-*.jsonl files
// come after the session files. Symbolic links are not followed.
func Discover(root string, exclude []string) (files []File, excluded int, err error) {
	if err := ValidateGlobs(exclude); err != nil {
		return nil, 0, err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, 0, fmt.Errorf("claudecode: %w", err)
	}
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".jsonl") {
			return nil
		}
		rel, err := filepath.Rel(abs, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		project := rel
		if i := strings.IndexByte(rel, '/'); i >= 0 {
			project = rel[:i]
		} else {
			project = ""
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		f := File{Path: p, Rel: rel, Project: project, Stem: strings.TrimSuffix(d.Name(), ".jsonl"), Size: info.Size()}
		if Excluded(f, exclude) {
			excluded++
			return nil
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("claudecode: discover %s: %w", root, err)
	}
	// Main session files before sub-agent files of the same project, so a
	// session's own records come before its sidechains' on first import.
	sort.Slice(files, func(i, j int) bool {
		a, b := files[i], files[j]
		if a.Project != b.Project {
			return a.Project < b.Project
		}
		if aa, ba := strings.HasPrefix(a.Stem, "agent-"), strings.HasPrefix(b.Stem, "agent-"); aa != ba {
			return ba
		}
		return a.Rel < b.Rel
	})
	return files, excluded, nil
}
