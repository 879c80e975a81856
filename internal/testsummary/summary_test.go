package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A real `go test -json` run of a throwaway module with a passing, a failing
// and a skipped test: run prints what plain go test prints (closing lines,
// the failed test's output only), keeps every event, and fails; report sums
// the events up.
func TestRunAndReportRealGoTest(t *testing.T) {
	goBin, err := exec.LookPath("go") // go test puts its own go command first in PATH
	if err != nil {
		t.Skip("no go command in PATH")
	}
	mod := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("good/good_test.go", `package good
import "testing"
func TestQuiet(t *testing.T) { t.Log("said by a passing test") }
func TestSkipped(t *testing.T) { t.Skip("not here") }
`)
	write("bad/bad_test.go", `package bad
import "testing"
func TestFine(t *testing.T) { t.Log("also said by a passing test") }
func TestBroken(t *testing.T) {
	t.Run("sub", func(t *testing.T) { t.Error("the reason it broke") })
}
`)
	write("none/none.go", "package none\n")

	log := filepath.Join(t.TempDir(), "logs", "unit.json")
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "-log", log, "--", goBin, "-C", mod, "test", "-count=1", "-json", "./..."}, &stdout, &stderr)
	out := stdout.String()
	if code == 0 {
		t.Errorf("exit status 0 for a failing run; output:\n%s", out)
	}
	for _, want := range []string{"ok  \texample.com/m/good", "FAIL\texample.com/m/bad", "--- FAIL: TestBroken", "the reason it broke", "example.com/m/none\t[no test files]"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s\nstderr:\n%s", want, out, stderr.String())
		}
	}
	for _, unwanted := range []string{"said by a passing test", "=== RUN", "not here", "\nPASS\n"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("output has %q, which plain go test does not print:\n%s", unwanted, out)
		}
	}

	var report bytes.Buffer
	if code := run([]string{"report", "-since", "1", log, filepath.Join(t.TempDir(), "never-ran.json")}, &report, &stderr); code != 0 {
		t.Fatalf("report exit status %d: %s", code, stderr.String())
	}
	rep := report.String()
	for _, want := range []string{"== test summary", "example.com/m/bad", "slowest 3 tests", "TestBroken/sub", "FAILED (3)", "unit ", "2 passed, 1 skipped, 3 failed", "total: "} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
}

// A command that exits 0 although its events report a failure still fails
// the run, and a command's own exit status is kept.
func TestRunExitStatus(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, c := range []struct {
		script string
		want   int
	}{
		{`echo '{"Action":"pass","Package":"p","Elapsed":1}'`, 0},
		{`echo '{"Action":"fail","Package":"p","Elapsed":1}'`, 1},
		{`echo '{"Action":"pass","Package":"p","Elapsed":1}'; exit 3`, 3},
		{`echo 'not json'; exit 0`, 0},
	} {
		var stdout, stderr bytes.Buffer
		log := filepath.Join(t.TempDir(), "x.json")
		if got := run([]string{"run", "-log", log, "--", sh, "-c", c.script}, &stdout, &stderr); got != c.want {
			t.Errorf("%s: exit status %d, want %d (stderr %q)", c.script, got, c.want, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if got := run([]string{"run", "--", sh, "-c", "true"}, &stdout, &stderr); got != 2 || !strings.Contains(stderr.String(), "-log FILE") {
		t.Errorf("run without -log: exit %d, stderr %q; want 2 naming -log", got, stderr.String())
	}
}
