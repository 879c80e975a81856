package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadOnlyDataDir: on a data dir the user cannot write (another user's,
// or chmod -w), `search`, `stats`, `show` and `check` work and write
// nothing, and a write fails with a message naming the directory. Root
// ignores file modes, so as root the commands run as user nobody (a real
// process with dropped privileges); otherwise the dir is made read-only.
// The store has vectors of the built-in model, so the vector store is read
// read-only too.
func TestReadOnlyDataDir(t *testing.T) {
	bin := buildCairn(t)
	data := t.TempDir()
	base := []string{"CAIRN_DATA_DIR=" + data, "HOME=" + os.TempDir(), "PATH=" + os.Getenv("PATH")}
	for _, text := range []string{"the parser is flaky on empty input", "the parser is fixed"} {
		cmd := exec.Command(bin, "note", "--agent", "ann", text)
		cmd.Env = base
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("note: %v\n%s", err, out)
		}
	}
	cred := makeReadOnly(t, bin, data)
	before := dirListing(t, data)
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = base
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"search", "parser"}, "flaky"},
		{[]string{"stats"}, "messages"},
		{[]string{"show", "1"}, "flaky"},
		{[]string{"check"}, "ok"},
	} {
		out, code := run(c.args...)
		if code != 0 || !strings.Contains(out, c.want) {
			t.Errorf("cairn %s on a read-only data dir: exit %d\n%s", strings.Join(c.args, " "), code, out)
		}
	}
	out, code := run("note", "--agent", "ann", "a write")
	if code == 0 || !strings.Contains(out, data) || !strings.Contains(out, "not writable") {
		t.Errorf("a write on a read-only data dir: exit %d, want a failure naming %s\n%s", code, data, out)
	}
	if after := dirListing(t, data); after != before {
		t.Errorf("the data dir changed:\n%s\nwas\n%s", after, before)
	}
}

// dirListing lists dir's files with their sizes and modification times.
func dirListing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			b.WriteString(p + " " + fi.Mode().String() + " " + fi.ModTime().String() + " " + string(rune('0'+fi.Size()%10)) + "\n")
		}
		return nil
	})
	return b.String()
}

// makeReadOnly makes data a data dir this test's cairn processes may not
// write, and returns the credential to start them with. Root ignores file
// modes, so as root they run as user nobody (a real process with dropped
// privileges) over a dir it may read; otherwise the dir is made read-only
// (its modes restored at cleanup, so that t.TempDir can remove it).
func makeReadOnly(t *testing.T, bin, data string) *syscall.Credential {
	t.Helper()
	if os.Geteuid() == 0 {
		// nobody may read the dir and run the binary, not write.
		for _, p := range []string{bin, filepath.Dir(bin), filepath.Dir(filepath.Dir(bin)), data, filepath.Dir(data)} {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		filepath.Walk(data, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				os.Chmod(p, 0o644)
			} else if err == nil {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		return &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	filepath.Walk(data, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			os.Chmod(p, fi.Mode().Perm()&^0o222)
		}
		return nil
	})
	t.Cleanup(func() {
		filepath.Walk(data, func(p string, fi os.FileInfo, err error) error {
			if err == nil {
				os.Chmod(p, fi.Mode().Perm()|0o200)
			}
			return nil
		})
	})
	return nil
}
