package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// event is one line of `go test -json` (cmd/test2json), build events included.
type event struct {
	Time       time.Time
	Action     string
	Package    string
	ImportPath string // build-output and build-fail events
	Test       string
	Elapsed    float64 // seconds
	Output     string
}

type testKey struct{ pkg, test string }

// printer turns the event stream back into what plain `go test` prints:
// per package its closing line, and the output of failed tests. A test's
// output is held until the test ends and dropped when it passes or skips.
type printer struct {
	w      io.Writer
	held   map[testKey][]string
	order  []testKey // held keys in first-output order, for flushing what never ended
	failed bool
}

func newPrinter(w io.Writer) *printer {
	return &printer{w: w, held: map[testKey][]string{}}
}

// line handles one line of the command's standard output.
func (p *printer) line(b []byte) {
	var e event
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &e) != nil {
		fmt.Fprintf(p.w, "%s\n", b) // not an event: pass it on as is
		return
	}
	switch e.Action {
	case "build-output":
		io.WriteString(p.w, e.Output)
	case "build-fail":
		p.failed = true
	case "output":
		if e.Test == "" {
			if e.Output == "PASS\n" {
				return // plain go test prints only the ok line of a passing package
			}
			if strings.HasPrefix(e.Output, "FAIL") {
				p.flushPackage(e.Package) // a timeout or panic: show what the running tests said first
			}
			io.WriteString(p.w, e.Output)
			return
		}
		if strings.HasPrefix(e.Output, "=== ") {
			return // -json runs tests verbosely; plain go test prints no RUN/PAUSE/CONT lines
		}
		k := testKey{e.Package, e.Test}
		if _, ok := p.held[k]; !ok {
			p.order = append(p.order, k)
		}
		p.held[k] = append(p.held[k], e.Output)
	case "fail":
		p.failed = true
		if e.Test == "" {
			p.flushPackage(e.Package)
			return
		}
		k := testKey{e.Package, e.Test}
		block := headerFirst(p.held[k])
		delete(p.held, k)
		if i := strings.LastIndex(e.Test, "/"); i >= 0 {
			// Plain go test prints a subtest's failure inside its parent's, after the parent's header.
			parent := testKey{e.Package, e.Test[:i]}
			if _, ok := p.held[parent]; !ok {
				p.order = append(p.order, parent)
			}
			p.held[parent] = append(p.held[parent], block...)
			return
		}
		for _, s := range block {
			io.WriteString(p.w, s)
		}
	case "pass", "skip":
		delete(p.held, testKey{e.Package, e.Test})
	}
}

// headerFirst moves a test's closing "--- FAIL: Name (1.00s)" line, which
// -json prints after the test's output, before it, where plain go test has it.
func headerFirst(lines []string) []string {
	for i := len(lines) - 1; i > 0; i-- {
		if strings.HasPrefix(strings.TrimLeft(lines[i], " "), "--- ") {
			out := make([]string, 0, len(lines))
			out = append(out, lines[i])
			out = append(out, lines[:i]...)
			return append(out, lines[i+1:]...)
		}
	}
	return lines
}

func (p *printer) flush(k testKey) {
	for _, s := range p.held[k] {
		io.WriteString(p.w, s)
	}
	delete(p.held, k)
}

func (p *printer) flushPackage(pkg string) {
	for _, k := range p.order {
		if k.pkg == pkg {
			p.flush(k)
		}
	}
	p.order = slices.DeleteFunc(p.order, func(k testKey) bool { return k.pkg == pkg })
}

// flushAll prints the output of tests that never ended (the command died).
func (p *printer) flushAll() {
	for _, k := range p.order {
		p.flush(k)
	}
	p.order = nil
}

// runEvents is what one run's event file says.
type runEvents struct {
	name        string
	first, last time.Time
	pkgs        map[string]pkgResult
	tests       []testResult // top-level tests only: a subtest's time is in its parent's
	failed      []testResult // failed tests and subtests, and failed packages (test ""; a build failure is one)
	passed      int
	skipped     int
}

type pkgResult struct {
	elapsed time.Duration
	failed  bool
	cached  bool // go test reused an earlier result ("ok ... (cached)")
}

type testResult struct {
	run, pkg, test string
	elapsed        time.Duration
}

func readRun(name string, r io.Reader) (*runEvents, error) {
	run := &runEvents{name: name, pkgs: map[string]pkgResult{}}
	cached := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var e event
		if b := sc.Bytes(); len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &e) != nil {
			continue
		}
		if !e.Time.IsZero() {
			if run.first.IsZero() || e.Time.Before(run.first) {
				run.first = e.Time
			}
			if e.Time.After(run.last) {
				run.last = e.Time
			}
		}
		d := time.Duration(e.Elapsed * float64(time.Second))
		switch {
		case e.Action == "output" && e.Test == "" && strings.HasPrefix(e.Output, "ok ") && strings.Contains(e.Output, "(cached)"):
			cached[e.Package] = true
		case e.Test == "" && (e.Action == "pass" || e.Action == "fail"):
			run.pkgs[e.Package] = pkgResult{elapsed: d, failed: e.Action == "fail", cached: cached[e.Package]}
			if e.Action == "fail" {
				run.failed = append(run.failed, testResult{run: name, pkg: e.Package, elapsed: d})
			}
		case e.Test == "":
		case e.Action == "pass" || e.Action == "fail":
			if !strings.Contains(e.Test, "/") {
				run.tests = append(run.tests, testResult{run: name, pkg: e.Package, test: e.Test, elapsed: d})
			}
			if e.Action == "fail" {
				run.failed = append(run.failed, testResult{run: name, pkg: e.Package, test: e.Test, elapsed: d})
			} else {
				run.passed++
			}
		case e.Action == "skip":
			run.skipped++
		}
	}
	return run, sc.Err()
}

func (r *runEvents) wall() time.Duration { return r.last.Sub(r.first) }

// summary is the report of several runs.
type summary struct {
	runs  []*runEvents
	Whole time.Duration // since the whole run started; 0 when unknown
	Load  string        // the 1, 5 and 15 minute load averages; "" when unknown
}

func summarize(runs []*runEvents) *summary { return &summary{runs: runs} }

// slowestShown is how many of the slowest tests the summary lists.
const slowestShown = 10

func (s *summary) write(w io.Writer) {
	const module = "github.com/cairn-dev/cairn"
	short := func(pkg string) string {
		if pkg == module {
			return "."
		}
		if rel, ok := strings.CutPrefix(pkg, module+"/"); ok {
			return rel
		}
		return pkg
	}
	secs := func(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

	fmt.Fprintln(w, "\n== test summary: wall time of each package's test binary per run (packages run in parallel)")
	// Packages, slowest first (by their slowest run); those that ran no test binary are left out.
	var pkgs []string
	worst := map[string]time.Duration{}
	for _, r := range s.runs {
		for p, res := range r.pkgs {
			if _, ok := worst[p]; !ok {
				pkgs = append(pkgs, p)
			}
			worst[p] = max(worst[p], res.elapsed)
		}
	}
	slices.SortFunc(pkgs, func(a, b string) int {
		if c := cmp.Compare(worst[b], worst[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	width := len("package")
	for _, p := range pkgs {
		width = max(width, len(short(p)))
	}
	fmt.Fprintf(w, "%-*s", width, "package")
	for _, r := range s.runs {
		fmt.Fprintf(w, "  %12s", r.name)
	}
	fmt.Fprintln(w)
	for _, p := range pkgs {
		fmt.Fprintf(w, "%-*s", width, short(p))
		for _, r := range s.runs {
			res, ok := r.pkgs[p]
			cell := "-"
			if ok {
				cell = secs(res.elapsed)
				if res.failed {
					cell += " FAIL"
				} else if res.cached {
					cell = "cached"
				}
			}
			fmt.Fprintf(w, "  %12s", cell)
		}
		fmt.Fprintln(w)
	}

	var tests []testResult
	for _, r := range s.runs {
		tests = append(tests, r.tests...)
	}
	slices.SortStableFunc(tests, func(a, b testResult) int { return cmp.Compare(b.elapsed, a.elapsed) })
	fmt.Fprintf(w, "\nslowest %d tests\n", min(slowestShown, len(tests)))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, t := range tests[:min(slowestShown, len(tests))] {
		fmt.Fprintf(tw, "%8s\t%s\t%s\t%s\n", secs(t.elapsed), t.run, short(t.pkg), t.test)
	}
	tw.Flush()

	var failed []testResult
	for _, r := range s.runs {
		failed = append(failed, r.failed...)
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "\nFAILED (%d)\n", len(failed))
		for _, f := range failed {
			what := f.test
			if what == "" {
				what = "(package)"
			}
			fmt.Fprintf(w, "  %s  %s  %s\n", f.run, short(f.pkg), what)
		}
	}

	fmt.Fprintln(w)
	var total time.Duration
	var parts []string
	for _, r := range s.runs {
		total += r.wall()
		parts = append(parts, fmt.Sprintf("%s %s wall, %d passed, %d skipped, %d failed", r.name, secs(r.wall()), r.passed, r.skipped, len(r.failed)))
	}
	fmt.Fprintf(w, "go test: %s\n", strings.Join(parts, "; "))
	line := fmt.Sprintf("total: %s of go test", secs(total))
	if s.Whole > 0 {
		line += fmt.Sprintf(", %s wall with set-up", secs(s.Whole.Round(100*time.Millisecond)))
	}
	if s.Load != "" {
		line += "; load average " + s.Load
	}
	fmt.Fprintln(w, line)
}
