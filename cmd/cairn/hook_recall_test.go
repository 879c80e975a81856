package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// hookContext decodes a recall hook's stdout: "" when it printed nothing.
func hookContext(t *testing.T, stdout, event string) string {
	t.Helper()
	if stdout == "" {
		return ""
	}
	var got struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("stdout is not the hook's JSON output: %v\n%s", err, stdout)
	}
	if got.HookSpecificOutput.HookEventName != event || got.HookSpecificOutput.AdditionalContext == "" {
		t.Fatalf("hook output for %s: %s", event, stdout)
	}
	return got.HookSpecificOutput.AdditionalContext
}

// commitAll commits the work tree of r as it is.
func commitAll(t *testing.T, r *git.Repository, msg string, when time.Time) {
	t.Helper()
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Commit(msg, &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: when}}); err != nil {
		t.Fatal(err)
	}
}

// TestPromptRecallHookForReal installs the hooks with `cairn setup
// claude-code` and runs the installed UserPromptSubmit and SessionStart
// commands as Claude Code does (through the shell, its JSON on stdin, in
// the session's working directory, a real git repository whose code
// changed since the notes were written): the prompt's recall lists the
// project's matching notes one line each with id, age, author and the
// breadcrumb marks at HEAD, within the budget, never twice in a session,
// and nothing for a prompt nothing stored is about.
func TestPromptRecallHookForReal(t *testing.T) {
	bin := buildCairn(t)
	h := newAgentHome(t, bin)
	h.cairn("setup", "claude-code")
	settings := readJSON(t, h.path(".claude/settings.json"))
	prompt, start := hookCommands(t, settings, "UserPromptSubmit"), hookCommands(t, settings, "SessionStart")
	if len(prompt) != 1 || len(start) != 1 {
		t.Fatalf("hooks: prompt %v start %v", prompt, start)
	}

	proj := filepath.Join(t.TempDir(), "shop")
	r, err := git.PlainInit(proj, false)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"invoice.go": "package shop // invoices are immutable\n",
		"card.go":    "package shop // card numbers are masked\n",
		"refund.go":  "package shop // refunds are queued\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(proj, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	commitAll(t, r, "init", time.Now().Add(-time.Hour)) // the notes are compared from the newest commit before them
	note := func(project, typ, crumb, text string) {
		t.Helper()
		args := []string{"note", "--agent", "claude", "--project", project, "--type", typ, "--confidence", "0.9"}
		if crumb != "" {
			args = append(args, "--meta", `{"breadcrumbs":{"files":["`+crumb+`"]}}`)
		}
		// Written in the repository, as an agent working in it would.
		cmd := exec.Command(h.bin, append(args, text)...)
		cmd.Dir, cmd.Env = proj, h.env()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cairn note: %v\n%s", err, out)
		}
	}
	note("shop", "decision", "invoice.go:1", "Invoices are immutable: correct an invoice by issuing a credit note, never by editing it")
	note("shop", "policy", "card.go", "Card numbers are never written to logs; the logger masks them")
	note("shop", "pattern", "refund.go:1", "Refunds go through the refund queue worker, which retries failed refunds")
	note("other", "decision", "", "In the other project invoices may be corrected by editing them")

	// The code changes: invoice.go's line changes, card.go goes, refund.go
	// moves; the marks cache is filled at the new HEAD.
	if err := os.WriteFile(filepath.Join(proj, "invoice.go"), []byte("package shop // invoices may be amended\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(proj, "card.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(proj, "payments"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(proj, "refund.go"), filepath.Join(proj, "payments", "refund.go")); err != nil {
		t.Fatal(err)
	}
	commitAll(t, r, "change", time.Now().Add(time.Minute))
	check := exec.Command(h.bin, "check", "--breadcrumbs", "--repo", proj)
	check.Dir, check.Env = proj, h.env()
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("cairn check: %v\n%s", err, out)
	}

	ask := func(session, text string, extra string) string {
		t.Helper()
		stdout, stderr, code := h.runHook(prompt[0]+extra, proj, map[string]any{
			"session_id": session, "transcript_path": filepath.Join(h.home, ".claude/projects/-shop/"+session+".jsonl"),
			"cwd": proj, "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": text})
		if code != 0 || stderr != "" {
			t.Fatalf("prompt hook: exit %d, stderr %s", code, stderr)
		}
		return hookContext(t, stdout, "UserPromptSubmit")
	}

	got := ask("s1", "How do we correct a wrong invoice?", "")
	line := lineWith(got, "Invoices are immutable")
	for _, want := range []string{"#1 (decision, ", ", claude; STALE: changed invoice.go:1)"} {
		if !strings.Contains(line, want) {
			t.Errorf("recalled line %q lacks %q\n%s", line, want, got)
		}
	}
	if strings.Contains(got, "other project") {
		t.Errorf("recall lists another project's note:\n%s", got)
	}
	if len(got) > 1000*4 {
		t.Errorf("recall is %d bytes, over the default budget of 1000 tokens", len(got))
	}
	// The same prompt again in the session: #1 is not repeated.
	if again := ask("s1", "How do we correct a wrong invoice?", ""); strings.Contains(again, "#1 ") {
		t.Errorf("a session was given #1 twice:\n%s", again)
	}
	// Gone and moved breadcrumbs are marked; a moved file shows its new path.
	got = ask("s2", "Are card numbers logged, and how are refunds retried?", "")
	if l := lineWith(got, "Card numbers"); !strings.Contains(l, "STALE: gone card.go") {
		t.Errorf("gone breadcrumb not marked: %q", l)
	}
	if l := lineWith(got, "Refunds go through"); !strings.Contains(l, "moved refund.go:1 -> payments/refund.go") || strings.Contains(l, "STALE") {
		t.Errorf("moved breadcrumb not shown as moved: %q", l)
	}
	// A budget from the command line bounds the text (40 tokens: the
	// header and at most one short line).
	if small := ask("s3", "How do we correct a wrong invoice?", " --budget 40"); len(small) > 160 {
		t.Errorf("--budget 40 gave %d bytes:\n%s", len(small), small)
	}
	// With recall.stale = omit, stale notes are left out.
	if err := os.WriteFile(filepath.Join(h.data, "config.toml"), []byte("[recall]\nstale = \"omit\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := ask("s4", "How do we correct a wrong invoice?", ""); strings.Contains(got, "Invoices are immutable") {
		t.Errorf("stale note recalled with stale = omit:\n%s", got)
	}
	if err := os.Remove(filepath.Join(h.data, "config.toml")); err != nil {
		t.Fatal(err)
	}

	// The session-start briefing marks stale notes too, and what it
	// listed is not recalled again by the session's prompts.
	stdout, stderr, code := h.runHook(start[0], proj, map[string]any{"session_id": "s5", "cwd": proj, "hook_event_name": "SessionStart", "source": "startup"})
	if code != 0 || stderr != "" {
		t.Fatalf("session start: exit %d %s", code, stderr)
	}
	brief := hookContext(t, stdout, "SessionStart")
	if l := lineWith(brief, "Invoices are immutable"); !strings.Contains(l, "STALE: changed invoice.go:1") {
		t.Errorf("briefing does not mark the stale decision: %q\n%s", l, brief)
	}
	if again := ask("s5", "How do we correct a wrong invoice?", ""); strings.Contains(again, "#1 ") {
		t.Errorf("a prompt repeated what the briefing gave:\n%s", again)
	}

	// Nothing stored is about this prompt: the hook prints nothing (the
	// search's relevance floor keeps the nearest unrelated notes out).
	t.Run("nothing relevant", func(t *testing.T) {
		if got := ask("s6", "Which zebra subspecies migrate across the Serengeti each year?", ""); got != "" {
			t.Errorf("recall for an unrelated prompt:\n%s", got)
		}
	})

	// The session ends: its log is removed.
	if _, stderr, code := h.runHook(hookCommands(t, settings, "SessionEnd")[0], proj, map[string]any{"session_id": "s1", "cwd": proj, "hook_event_name": "SessionEnd", "reason": "other", "transcript_path": filepath.Join(h.home, "none.jsonl")}); code != 0 || stderr != "" {
		t.Fatalf("session end: exit %d %s", code, stderr)
	}
	if got := ask("s1", "How do we correct a wrong invoice?", ""); !strings.Contains(got, "#1 ") {
		t.Errorf("after the session ended its log was kept:\n%s", got)
	}
}

// lineWith returns the line of text that contains s.
func lineWith(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestRecallHooksWriteNothing: the recall hooks only read the store: the
// database file stays byte for byte as it was, with no WAL left (the
// session's recall log lives beside it).
func TestRecallHooksWriteNothing(t *testing.T) {
	data, proj := t.TempDir(), filepath.Join(t.TempDir(), "shop")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data, "HOME": t.TempDir()})
	for _, text := range []string{"The parser is flaky under load", "We fixed the parser by bounding its input"} {
		if _, errOut, code := runCLI(t, getenv, "", "note", "--agent", "ann", "--project", "shop", "--type", "decision", text); code != 0 {
			t.Fatalf("note: exit %d: %s", code, errOut)
		}
	}
	unchanged := dbUnchanged(t, filepath.Join(data, sqlite.DBFile))
	for _, event := range []string{"SessionStart", "UserPromptSubmit"} {
		in, _ := json.Marshal(map[string]any{"session_id": "s-" + event, "cwd": proj, "hook_event_name": event, "source": "startup", "prompt": "is the parser still flaky?"})
		out, errOut, code := runCLI(t, getenv, string(in), "hook", "claude-code")
		if code != 0 || errOut != "" || !strings.Contains(out, "parser") {
			t.Fatalf("%s: exit %d\n%s%s", event, code, out, errOut)
		}
	}
	unchanged("the recall hooks")
}
