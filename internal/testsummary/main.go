package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage:
  testsummary run -log FILE -- go test -json [flags] [packages]
  testsummary report [-since UNIX_SECONDS] FILE...`

// run dispatches the subcommands and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	switch args[0] {
	case "run":
		return runCommand(args[1:], stdout, stderr)
	case "report":
		return runReport(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "testsummary: unknown command %q\n%s\n", args[0], usage)
	return 2
}

func runCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	logPath := fs.String("log", "", "file that keeps the command's JSON events (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *logPath == "" || fs.NArg() == 0 {
		fmt.Fprintf(stderr, "testsummary run: -log FILE and a command are required\n%s\n", usage)
		return 2
	}
	if err := os.MkdirAll(filepath.Dir(*logPath), 0o755); err != nil {
		fmt.Fprintf(stderr, "testsummary: %v\n", err)
		return 1
	}
	logFile, err := os.Create(*logPath)
	if err != nil {
		fmt.Fprintf(stderr, "testsummary: %v\n", err)
		return 1
	}
	defer logFile.Close()

	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "testsummary: %v\n", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "testsummary: starting %s: %v\n", strings.Join(fs.Args(), " "), err)
		return 1
	}
	p := newPrinter(stdout)
	logW := bufio.NewWriter(logFile)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 64<<20) // one event carries one output line; tests may print long ones
	for sc.Scan() {
		line := sc.Bytes()
		logW.Write(line)
		logW.WriteByte('\n')
		p.line(line)
	}
	scanErr := sc.Err()
	if scanErr != nil {
		// Keep draining so that the command is not blocked on a full pipe.
		io.Copy(io.Discard, out)
	}
	waitErr := cmd.Wait()
	p.flushAll()
	if err := logW.Flush(); err != nil {
		fmt.Fprintf(stderr, "testsummary: writing %s: %v\n", *logPath, err)
	}
	if scanErr != nil {
		fmt.Fprintf(stderr, "testsummary: reading the command's output: %v\n", scanErr)
		return 1
	}
	var exit *exec.ExitError
	switch {
	case errors.As(waitErr, &exit):
		if code := exit.ExitCode(); code > 0 {
			return code
		}
		return 1 // killed by a signal
	case waitErr != nil:
		fmt.Fprintf(stderr, "testsummary: %v\n", waitErr)
		return 1
	case p.failed:
		fmt.Fprintln(stderr, "testsummary: the command exited 0 but reported failures")
		return 1
	}
	return 0
}

func runReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	since := fs.Int64("since", 0, "Unix time (seconds) the whole run started, for its total wall time")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "testsummary report: no event files\n%s\n", usage)
		return 2
	}
	var runs []*runEvents
	for _, path := range fs.Args() {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintf(stderr, "testsummary: %v\n", err)
			continue // a run that never started (an earlier step failed) is simply not in the summary
		}
		r, err := readRun(strings.TrimSuffix(filepath.Base(path), ".json"), f)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "testsummary: %s: %v\n", path, err)
			return 1
		}
		runs = append(runs, r)
	}
	s := summarize(runs)
	if *since > 0 {
		s.Whole = time.Since(time.Unix(*since, 0))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			s.Load = strings.Join(f[:3], " ")
		}
	}
	s.write(stdout)
	return 0
}
