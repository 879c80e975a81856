package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/go-git/go-git/v5"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the transcripts in testdata/ with the current output")

// TestTranscripts runs the CLI transcripts in testdata/*.txt in-process.
//
// Format: "$ cairn ARGS" runs a command (ARGS split like a shell: '...' and
// "..." quote, \ escapes inside "..."); "<< TEXT" lines before it are its
// stdin; "-- " lines are comments. The lines after a command are its output:
// stdout as is, stderr prefixed "! ", then "[exit N]" when N != 0. Each file
// gets its own data dir ($DATA in output and arguments; CAIRN_DATA_DIR points there) and a
// clock starting at 2026-01-02T03:04:05Z that advances 1 s per reading.
// Run with -rewrite to regenerate the expected output.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			t.Parallel()
			runTranscript(t, file)
		})
	}
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(time.Second)
	return t
}

func runTranscript(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "data")
	// Notes with breadcrumbs record the repository they are written in:
	// one of the transcript's own, shown as $REPO.
	repo := filepath.Join(t.TempDir(), "repo")
	if _, err := git.PlainInit(repo, false); err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	getenv := func(k string) string {
		switch k {
		case "CAIRN_DATA_DIR":
			return dir
		case "CAIRN_BREADCRUMBS_REPO":
			return repo
		case "HOME":
			return "/home/test"
		}
		return ""
	}
	var out strings.Builder
	var stdin []string
	lines := strings.Split(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	failed := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "-- ") || line == "--" || line == "":
			out.WriteString(line + "\n")
			continue
		case strings.HasPrefix(line, "<< ") || line == "<<":
			stdin = append(stdin, strings.TrimPrefix(strings.TrimPrefix(line, "<<"), " "))
			out.WriteString(line + "\n")
			continue
		case !strings.HasPrefix(line, "$ cairn"):
			t.Fatalf("%s:%d: expected a command, comment or stdin line, got %q", file, i+1, line)
		}
		out.WriteString(line + "\n")
		args, err := splitArgs(strings.TrimPrefix(strings.TrimPrefix(line, "$ cairn"), " "))
		if err != nil {
			t.Fatalf("%s:%d: %v", file, i+1, err)
		}
		for k := range args {
			args[k] = strings.ReplaceAll(args[k], "$DATA", dir)
		}
		// Expected output: until the next command, stdin or comment line.
		j := i + 1
		for j < len(lines) && !strings.HasPrefix(lines[j], "$ cairn") && !strings.HasPrefix(lines[j], "<<") && !strings.HasPrefix(lines[j], "-- ") {
			j++
		}
		want := strings.Join(lines[i+1:j], "\n")
		got := strings.ReplaceAll(runOne(args, strings.Join(stdin, "\n"), getenv, clk.now, dir), repo, "$REPO")
		stdin = nil
		if got != "" {
			out.WriteString(got + "\n")
		}
		out.WriteString("\n")
		if strings.TrimRight(got, "\n") != strings.TrimRight(want, "\n") && !*rewrite {
			failed = true
			t.Errorf("%s:%d: $ cairn %s\n--- got\n%s\n--- want\n%s", file, i+1, strings.Join(args, " "), got, want)
		}
		i = j - 1
	}
	if *rewrite {
		if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if failed {
		t.Log("run with -rewrite to accept the new output")
	}
}

func runOne(args []string, stdin string, getenv func(string) string, now func() time.Time, dir string) string {
	var stdout, stderr bytes.Buffer
	e := &env{
		stdin: strings.NewReader(stdin), stdout: &stdout, stderr: &stderr, getenv: getenv, now: now,
		stdinIsTerminal: func() bool { return stdin == "" },
	}
	code := report(&stderr, run(context.Background(), e, args))
	var b strings.Builder
	b.WriteString(strings.TrimRight(stdout.String(), "\n"))
	if s := strings.TrimRight(stderr.String(), "\n"); s != "" {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("! " + strings.ReplaceAll(s, "\n", "\n! "))
	}
	if code != 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[exit %d]", code)
	}
	// The format version grows with every migration; transcripts should not.
	f := sqlite.FormatVersion()
	return strings.NewReplacer(dir, "$DATA", fmt.Sprintf("format %d", f), "format $FORMAT",
		fmt.Sprintf(`"db_format":%d`, f), `"db_format":$FORMAT`).Replace(b.String())
}

// splitArgs splits s like a POSIX shell would for simple quoting.
func splitArgs(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		case c == '\'':
			inArg = true
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			inArg = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`, s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
		case c == '\\' && i+1 < len(s):
			inArg = true
			i++
			cur.WriteByte(s[i])
		default:
			inArg = true
			cur.WriteByte(c)
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}
