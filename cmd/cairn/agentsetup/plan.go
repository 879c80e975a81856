package agentsetup

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Options say whose files to edit and what to register. Home, Binary and
// DataDir are required and must be absolute.
type Options struct {
	// Home is the user's home directory (the agents' files live below it).
	Home string
	// Getenv reads CLAUDE_CONFIG_DIR and CODEX_HOME; nil reads nothing.
	Getenv func(string) string
	// Binary is the absolute path of the cairn binary the agent runs.
	Binary string
	// DataDir is the absolute data dir the agent's cairn uses.
	DataDir string
	// StateDir keeps how to reverse each edit (usually DATA/setup).
	StateDir string
}

func (o Options) getenv() func(string) string {
	if o.Getenv == nil {
		return func(string) string { return "" }
	}
	return o.Getenv
}

func (o Options) validate() error {
	for _, f := range []struct{ name, v string }{{"home", o.Home}, {"binary", o.Binary}, {"data dir", o.DataDir}, {"state dir", o.StateDir}} {
		if !filepath.IsAbs(f.v) {
			return fmt.Errorf("agentsetup: %s must be an absolute path, got %q", f.name, f.v)
		}
	}
	return nil
}

// Change is one file's edit: its bytes before and after (nil: absent).
type Change struct {
	Path   string
	Before []byte
	After  []byte
	// Exact says an uninstall restores the bytes the file had before setup
	// (the file was not changed since); otherwise cairn's entries are
	// removed and the rest kept.
	Exact bool
	mode  fs.FileMode
}

// Changed reports whether the change writes anything.
func (c Change) Changed() bool {
	return !bytes.Equal(c.Before, c.After) || (c.Before == nil) != (c.After == nil)
}

// Plan returns the changes setting agent up would make (uninstall false)
// or undoing its setup would make (uninstall true), one per file, in order;
// unchanged files are included with Changed false. Nothing is written.
func Plan(agent string, o Options, uninstall bool) ([]Change, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	files, err := agentFiles(agent, o)
	if err != nil {
		return nil, err
	}
	st, err := loadState(o.StateDir, agent)
	if err != nil {
		return nil, err
	}
	var out []Change
	for _, f := range files {
		path, err := resolve(f.path)
		if err != nil {
			return nil, err
		}
		before, mode, err := readFile(path)
		if err != nil {
			return nil, err
		}
		c := Change{Path: path, Before: before, mode: mode}
		if mode == 0 {
			c.mode = fs.FileMode(f.mode)
		}
		if uninstall {
			if orig, ok := st.Files[path].restore(before); ok {
				c.After, c.Exact = orig, true
			} else if before != nil {
				if c.After, err = f.remove(before); err != nil {
					return nil, fmt.Errorf("%s: %w", path, err)
				}
			}
		} else if c.After, err = f.install(before); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// Apply writes the changes that change something and records (install) or
// forgets (uninstall) how to reverse them in o.StateDir.
func Apply(agent string, o Options, changes []Change, uninstall bool) error {
	st, err := loadState(o.StateDir, agent)
	if err != nil {
		return err
	}
	for _, c := range changes {
		if !c.Changed() {
			continue
		}
		if !uninstall {
			orig := c.Before
			if prev, ok := st.Files[c.Path].restore(c.Before); ok {
				orig = prev // re-setup over our own earlier edit
			}
			st.Files[c.Path] = newEdit(orig, c.After)
		} else {
			delete(st.Files, c.Path)
		}
		if c.After == nil {
			if err := os.Remove(c.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			continue
		}
		if err := writeAtomic(c.Path, c.After, c.mode); err != nil {
			return err
		}
	}
	return st.save(o.StateDir, agent)
}

// resolve follows a symlinked config file to the file it points at, so
// that an edit replaces the target, not the link.
func resolve(path string) (string, error) {
	p, err := filepath.EvalSymlinks(path)
	switch {
	case err == nil:
		return p, nil
	case errors.Is(err, fs.ErrNotExist):
		return path, nil
	}
	return "", err
}

func readFile(path string) ([]byte, fs.FileMode, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	if st.IsDir() {
		return nil, 0, fmt.Errorf("%s is a directory", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	if data == nil {
		data = []byte{}
	}
	return data, st.Mode().Perm(), nil
}

// writeAtomic writes data to path through a temp file in the same
// directory: fsync, rename, fsync the directory.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".cairn-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// edit reverses one install: the file's bytes after install are
// before[:Offset] + New + before[Offset+len(Old):]; Absent says the file
// did not exist.
type edit struct {
	Absent      bool   `json:"absent,omitempty"`
	Offset      int    `json:"offset"`
	Old         string `json:"old"`
	NewLen      int    `json:"new_len"`
	AfterSHA256 string `json:"after_sha256"`
}

func newEdit(before, after []byte) *edit {
	p := 0
	for p < len(before) && p < len(after) && before[p] == after[p] {
		p++
	}
	s := 0
	for s < len(before)-p && s < len(after)-p && before[len(before)-1-s] == after[len(after)-1-s] {
		s++
	}
	return &edit{Absent: before == nil, Offset: p, Old: string(before[p : len(before)-s]), NewLen: len(after) - p - s, AfterSHA256: sha(after)}
}

// restore returns the bytes before the install when cur is exactly what
// the install wrote (nil when the file did not exist).
func (e *edit) restore(cur []byte) ([]byte, bool) {
	if e == nil || cur == nil || sha(cur) != e.AfterSHA256 || e.Offset+e.NewLen > len(cur) {
		return nil, false
	}
	if e.Absent {
		return nil, true
	}
	return concat(cur[:e.Offset], []byte(e.Old), cur[e.Offset+e.NewLen:]), true
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// state is what the state file of one agent holds.
type state struct {
	Version int              `json:"version"`
	Files   map[string]*edit `json:"files"`
}

const stateVersion = 1

func statePath(dir, agent string) string { return filepath.Join(dir, agent+".json") }

func loadState(dir, agent string) (*state, error) {
	st := &state{Version: stateVersion, Files: map[string]*edit{}}
	data, err := os.ReadFile(statePath(dir, agent))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, st); err != nil || st.Version < 1 {
		return nil, fmt.Errorf("agentsetup: state file %s is corrupt; remove it (uninstall then removes cairn's entries without restoring exact bytes)", statePath(dir, agent))
	}
	if st.Version > stateVersion {
		return nil, fmt.Errorf("agentsetup: state file %s has version %d, newer than this cairn (%d)", statePath(dir, agent), st.Version, stateVersion)
	}
	if st.Files == nil {
		st.Files = map[string]*edit{}
	}
	return st, nil
}

func (st *state) save(dir, agent string) error {
	if len(st.Files) == 0 {
		err := os.Remove(statePath(dir, agent))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(statePath(dir, agent), append(data, '\n'), 0o600)
}

// Diff returns c as a unified diff without context lines ("" when nothing
// changes).
func (c Change) Diff() string {
	if !c.Changed() {
		return ""
	}
	before, after := c.Before, c.After
	p := 0
	for p < len(before) && p < len(after) && before[p] == after[p] {
		p++
	}
	p = bytes.LastIndexByte(before[:p], '\n') + 1 // start of the first changed line
	s := 0
	for s < len(before)-p && s < len(after)-p && before[len(before)-1-s] == after[len(after)-1-s] {
		s++
	}
	// The common tail starts a line in both files (a newline before it,
	// possibly the last one of the common head).
	for s > 0 && !(startsLine(before, len(before)-s, p) && startsLine(after, len(after)-s, p)) {
		s--
	}
	old, new := lines(before[p:len(before)-s]), lines(after[p:len(after)-s])
	startLine := bytes.Count(before[:p], []byte("\n")) + 1
	from, to := c.Path, c.Path
	if c.Before == nil {
		from = "/dev/null"
	}
	if c.After == nil {
		to = "/dev/null"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n@@ -%s +%s @@\n", from, to, hunkRange(startLine, len(old)), hunkRange(startLine, len(new)))
	for _, l := range old {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range new {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

func startsLine(b []byte, i, head int) bool {
	return i == len(b) || i-1 >= head-1 && i-1 >= 0 && b[i-1] == '\n'
}

func lines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
