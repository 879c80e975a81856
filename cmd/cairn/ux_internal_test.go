package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
)

// TestDidYouMean: unknown commands and flags name the nearest one.
func TestDidYouMean(t *testing.T) {
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": t.TempDir()})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serach", "x"}, "did you mean search?"},
		{[]string{"help", "exprot"}, "did you mean export?"},
		{[]string{"search", "--limt", "3", "x"}, "did you mean --limit?"},
		{[]string{"--jsno", "stats"}, "did you mean --json?"},
		{[]string{"completion", "bsh"}, "did you mean bash?"},
	} {
		_, errOut, code := runCLI(t, getenv, "", tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("cairn %v: exit %d, %q; want %q", tc.args, code, errOut, tc.want)
		}
	}
	if _, errOut, _ := runCLI(t, getenv, "", "zzzzzz"); strings.Contains(errOut, "did you mean") {
		t.Errorf("a far name got a suggestion: %s", errOut)
	}
}

// TestHelpListsEveryFlag: help pages list each form's flags once, with
// defaults; `cairn --version` prints the version.
func TestHelpListsEveryFlag(t *testing.T) {
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": t.TempDir()})
	out, _, code := runCLI(t, getenv, "", "import", "--help")
	if code != 0 {
		t.Fatalf("import --help: exit %d", code)
	}
	for _, want := range []string{"--batch N", "(default 1000)", "--skip-invalid", "--no-embed", "--no-create-channels", "--exclude GLOB", "--no-redact"} {
		if !strings.Contains(out, want) {
			t.Errorf("import --help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "(repeatable) (repeatable)") || strings.Contains(out, "repeatable; adds to import.exclude) (repeatable)") {
		t.Errorf("repeatable said twice:\n%s", out)
	}
	out, _, _ = runCLI(t, getenv, "", "help", "post")
	if !strings.Contains(out, "--channel ID") || !strings.Contains(out, "--sender NAME") {
		t.Errorf("help post lacks the command's flags:\n%s", out)
	}
	out, _, code = runCLI(t, getenv, "", "--version")
	if code != 0 || !strings.HasPrefix(out, "cairn ") || !strings.Contains(out, "database format") {
		t.Errorf("--version: %d %q", code, out)
	}
}

func TestVersionOf(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-24T02:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct {
		linked string
		bi     *debug.BuildInfo
		want   string
	}{
		{"v1.2.3", vcs, "v1.2.3"},
		{"", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "v0.4.0"},
		{"", vcs, "devel-0123456789ab-dirty"},
		{"", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "(devel)"},
		{"", nil, "(devel)"},
	} {
		if got := versionOf(tc.linked, tc.bi); got.Version != tc.want {
			t.Errorf("versionOf(%q, ...) = %q, want %q", tc.linked, got.Version, tc.want)
		}
	}
	if got := versionOf("", vcs); got.Commit != "0123456789abcdef0123" || got.CommitTime == "" || !got.Modified {
		t.Errorf("vcs fields: %+v", got)
	}
}

func TestProgressLine(t *testing.T) {
	got := progressLine("import", engine.Progress{Done: 250, Total: 1000, Item: "line 250"}, 5*time.Second)
	for _, want := range []string{"25%", "50/s", "15s left", "line 250"} {
		if !strings.Contains(got, want) {
			t.Errorf("progressLine = %q, lacks %q", got, want)
		}
	}
	got = progressLine("embed", engine.Progress{Done: 3_000_000, Total: 3_000_000}, 2*time.Minute)
	if !strings.Contains(got, "100%") || !strings.Contains(got, "25.0k/s") || strings.Contains(got, "left") {
		t.Errorf("done bar = %q", got)
	}
	if got := shortDuration(2*time.Hour + 5*time.Minute); got != "2h05m" {
		t.Errorf("shortDuration = %q", got)
	}
}

func TestScoreText(t *testing.T) {
	r := engine.SearchResult{Score: 1.09e-06, Snippet: "x", Scores: engine.Scores{Keyword: 1, Final: 1.09e-06}}
	if got := scoreText(r); got != "score <0.01 · keyword 1.00" {
		t.Errorf("scoreText = %q", got)
	}
	r = engine.SearchResult{Score: 0.4321, Scores: engine.Scores{Similarity: 0.61, Fused: 0.61}}
	if got := scoreText(r); got != "score 0.43 · similarity 0.61" {
		t.Errorf("semantic scoreText = %q", got)
	}
	if got := scoreText(engine.SearchResult{}); got != "" {
		t.Errorf("listing scoreText = %q", got)
	}
}

// TestCompletion: the scripts name every command; the bash one is valid
// bash and completes commands and a command's flags.
func TestCompletion(t *testing.T) {
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": t.TempDir()})
	for _, sh := range []string{"bash", "zsh", "fish"} {
		out, errOut, code := runCLI(t, getenv, "", "completion", sh)
		if code != 0 {
			t.Fatalf("completion %s: %d %s", sh, code, errOut)
		}
		for _, c := range commands() {
			if !strings.Contains(out, c.name) {
				t.Errorf("%s completion lacks %s", sh, c.name)
			}
		}
		if !strings.Contains(out, "skip-invalid") {
			t.Errorf("%s completion lacks import's --skip-invalid", sh)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script, _, _ := runCLI(t, getenv, "", "completion", "bash")
	f := filepath.Join(t.TempDir(), "c.bash")
	os.WriteFile(f, []byte(script), 0o644)
	out, err := exec.Command(bash, "-c", `source "$1"; COMP_WORDS=(cairn sear); COMP_CWORD=1; _cairn; echo "${COMPREPLY[*]}"; COMP_WORDS=(cairn search --lim); COMP_CWORD=2; _cairn; echo "${COMPREPLY[*]}"`, "x", f).CombinedOutput()
	if err != nil || string(out) != "search\n--limit\n" {
		t.Errorf("bash completion: %v %q", err, out)
	}
}
