package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/cmd/cairn/agentsetup"
	"github.com/cairn-dev/cairn/cmd/cairn/config"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

func hookCommand() *command {
	return &command{
		name:    "hook",
		summary: "run as an agent's hook (installed by cairn setup): recall at session start and on every prompt, capture at session end",
		usage:   "claude-code|codex|gemini [--budget TOKENS] [--data-dir DIR]   (reads the hook's JSON on stdin)",
		examples: []string{
			`echo '{"hook_event_name":"SessionStart","cwd":"'$PWD'"}' | cairn hook claude-code`,
			`echo '{"hook_event_name":"UserPromptSubmit","session_id":"s1","cwd":"'$PWD'","prompt":"how do we deploy?"}' | cairn hook claude-code --budget 500`,
		},
		run: runHook,
	}
}

// hookInput is the JSON an agent sends a command hook on stdin (Claude
// Code's fields; Codex and Gemini CLI send the same names).
type hookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	CWD            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Source         string `json:"source"`  // SessionStart: startup, resume, clear, compact
	Reason         string `json:"reason"`  // SessionEnd: clear, logout, prompt_input_exit, other
	Trigger        string `json:"trigger"` // PreCompact: manual, auto
	Prompt         string `json:"prompt"`  // UserPromptSubmit (Gemini CLI: BeforeAgent)
}

// Hook events cairn answers, by the names the agents send.
const (
	eventSessionStart = "SessionStart"
	eventSessionEnd   = "SessionEnd"
	eventPreCompact   = "PreCompact"
	eventPrompt       = "UserPromptSubmit" // Claude Code, Codex
	eventBeforeAgent  = "BeforeAgent"      // Gemini CLI's UserPromptSubmit
)

// recallSessionsDir is the data dir's folder of per-session recall logs.
const recallSessionsDir = "recall-sessions"

// Time bounds, below the timeouts setup writes into the agents' settings
// (agentsetup), so that cairn stops on its own before the agent kills it.
const (
	recallHookTimeout  = 8 * time.Second
	captureHookTimeout = 50 * time.Second
	maxHookInput       = 1 << 20
)

// runHook never fails the agent: anything that goes wrong after the
// arguments were understood is reported on stderr and the exit code is 0
// (Claude Code shows a non-zero exit as a hook error, and exit 2 would
// feed stderr to the model).
func runHook(ctx context.Context, e *env, c *command, args []string) (err error) {
	fs := newFlagSet(e, c)
	instruction := fs.Bool("instruction", false, "SessionStart: print the memory instruction before the briefing (the Claude Code plugin's hook, which has no CLAUDE.md to put it in)")
	budget := fs.Int("budget", -1, "most `TOKENS` (estimated, 4 bytes each) one prompt's recall adds (default: config recall.prompt_tokens, 1000)")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if *budget < -1 {
		return usagef(c.name, "--budget must be a number of tokens >= 0, got %d", *budget)
	}
	if len(pos) != 1 || !slices.Contains(agentsetup.Agents(), pos[0]) {
		return usagef(c.name, "expected the agent: %s", strings.Join(agentsetup.Agents(), ", "))
	}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(e.stderr, "cairn hook: internal error: %v\n%s", r, debug.Stack())
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "cairn hook: %v\n", err)
		}
		err = nil
	}()
	in, err := readHookInput(ctx, e.stdin)
	if err != nil {
		return err
	}
	switch in.HookEventName {
	case eventSessionStart, eventPrompt, eventBeforeAgent:
		// Recall only reads the store (its session log lives beside
		// it): a read-only open searches with SQLite's FTS5 rather than
		// building the in-memory keyword index a long-lived process
		// keeps, and a recall is a one-shot search.
		e.readOnly = true
		e.oneShotGC()
	}
	switch in.HookEventName {
	case eventSessionStart:
		ctx, cancel := context.WithTimeout(ctx, recallHookTimeout)
		defer cancel()
		return e.hookRecall(ctx, in, *instruction)
	case eventPrompt, eventBeforeAgent:
		ctx, cancel := context.WithTimeout(ctx, recallHookTimeout)
		defer cancel()
		return e.hookPromptRecall(ctx, in, *budget)
	case eventSessionEnd, eventPreCompact:
		if in.HookEventName == eventSessionEnd {
			if err := e.forgetRecallSession(in.SessionID); err != nil {
				fmt.Fprintf(e.stderr, "cairn hook: %v\n", err)
			}
		}
		if pos[0] != agentsetup.ClaudeCode {
			return nil // only Claude Code transcripts can be imported
		}
		ctx, cancel := context.WithTimeout(ctx, captureHookTimeout)
		defer cancel()
		return e.hookCapture(ctx, in)
	}
	return nil
}

// readHookInput reads and decodes the hook's stdin, giving up when ctx
// ends (a caller that never closes stdin must not hang the hook).
func readHookInput(ctx context.Context, r io.Reader) (hookInput, error) {
	type result struct {
		data []byte
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(r, maxHookInput+1))
		ch <- result{data, err}
	}()
	ctx, cancel := context.WithTimeout(ctx, recallHookTimeout)
	defer cancel()
	var res result
	select {
	case res = <-ch:
	case <-ctx.Done():
		return hookInput{}, errors.New("no hook input on stdin")
	}
	if res.err != nil {
		return hookInput{}, fmt.Errorf("reading the hook input: %w", res.err)
	}
	if len(res.data) > maxHookInput {
		return hookInput{}, fmt.Errorf("hook input larger than %d bytes", maxHookInput)
	}
	var in hookInput
	if err := json.Unmarshal(res.data, &in); err != nil {
		return hookInput{}, fmt.Errorf("hook input is not the JSON object agents send: %w", err)
	}
	return in, nil
}

// hookCapture imports the session's transcript when the event's trigger
// is switched on in [capture].
func (e *env) hookCapture(ctx context.Context, in hookInput) error {
	cfg, _, err := e.loadConfig()
	if err != nil {
		return err
	}
	on := map[string]bool{"SessionEnd": cfg.Capture.SessionEnd, "PreCompact": cfg.Capture.PreCompact}[in.HookEventName]
	if !on {
		return nil
	}
	if in.TranscriptPath == "" || !filepath.IsAbs(in.TranscriptPath) || filepath.Ext(in.TranscriptPath) != ".jsonl" {
		return fmt.Errorf("transcript_path must be an absolute .jsonl path, got %q", in.TranscriptPath)
	}
	opts, err := cfg.ImportOptions(in.TranscriptPath, e.getenv)
	if err != nil {
		return err
	}
	return e.withEngine(ctx, func(eng *engine.Engine) error {
		rep, err := ingest.ImportSessions(ctx, eng, opts)
		if err != nil {
			return err
		}
		if rep.FilesExcluded > 0 {
			fmt.Fprintf(e.stdout, "cairn: %s is excluded (import.exclude); nothing stored\n", in.TranscriptPath)
			return nil
		}
		for _, f := range rep.Files {
			if f.Error != "" {
				return fmt.Errorf("import %s: %s", f.Path, f.Error)
			}
		}
		fmt.Fprintf(e.stdout, "cairn: %s: %d records added, %d already stored\n", in.TranscriptPath, rep.Added, rep.Known)
		return nil
	})
}

// hookRecall prints the project's briefing as the SessionStart hook
// output that adds context: {"hookSpecificOutput": {"hookEventName":
// "SessionStart", "additionalContext": TEXT}}, and records what it listed
// in the session's recall log, so that prompts do not repeat it. A
// cleared or compacted session starts a new log (its context no longer
// holds what was recalled). It prints nothing when recall is off, the
// store does not exist yet or holds nothing for the project.
func (e *env) hookRecall(ctx context.Context, in hookInput, instruction bool) error {
	text, err := e.sessionBriefing(ctx, in)
	if err != nil {
		return err
	}
	if instruction {
		text = strings.TrimRight(agentsetup.Instruction()+"\n\n"+text, "\n")
	}
	if text == "" {
		return nil
	}
	return e.printHookContext(eventSessionStart, text)
}

// sessionBriefing is the SessionStart briefing's text ("" for none).
func (e *env) sessionBriefing(ctx context.Context, in hookInput) (string, error) {
	cfg, _, err := e.loadConfig()
	if err != nil {
		return "", err
	}
	dir, err := e.resolveDataDir()
	if err != nil {
		return "", err
	}
	logs := filepath.Join(dir, recallSessionsDir)
	if err := ops.PruneSessionLogs(logs, e.clock()); err != nil {
		fmt.Fprintf(e.stderr, "cairn hook: %v\n", err)
	}
	if in.Source == "clear" || in.Source == "compact" {
		if err := ops.ForgetSession(logs, in.SessionID); err != nil {
			return "", err
		}
	}
	if !cfg.Recall.SessionStart || cfg.Recall.MaxItems == 0 || cfg.Recall.MaxBytes == 0 {
		return "", nil
	}
	if _, err := os.Stat(filepath.Join(dir, sqlite.DBFile)); errors.Is(err, os.ErrNotExist) {
		return "", nil // a read never creates the store (setup may have made the dir only)
	}
	project, sub := projectOf(in.CWD)
	if project == "" {
		return "", nil
	}
	var got ops.Recalled
	err = e.withEngine(ctx, func(eng *engine.Engine) error {
		got, err = ops.Brief(ctx, eng, ops.Briefing{
			Project: project, Sub: sub, MaxItems: cfg.Recall.MaxItems, MaxBytes: cfg.Recall.MaxBytes,
			OmitStale: cfg.Recall.Stale == config.StaleOmit, Now: e.clock(),
		})
		return err
	})
	if err != nil || got.Text == "" {
		return "", err
	}
	e.recordRecalled(ops.OpenSessionLog(logs, in.SessionID), got.IDs)
	return got.Text, nil
}

// hookPromptRecall prints what a search with the prompt finds in the
// project and the session has not been given yet, within the budget, as
// the prompt hook's added context; nothing when nothing is found.
func (e *env) hookPromptRecall(ctx context.Context, in hookInput, budget int) error {
	cfg, _, err := e.loadConfig()
	if err != nil {
		return err
	}
	if budget < 0 {
		budget = cfg.Recall.PromptTokens
	}
	if !cfg.Recall.Prompt || budget == 0 || strings.TrimSpace(in.Prompt) == "" {
		return nil
	}
	dir, err := e.resolveDataDir()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, sqlite.DBFile)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	project, _ := projectOf(in.CWD)
	if project == "" {
		return nil
	}
	logs := filepath.Join(dir, recallSessionsDir)
	log := ops.OpenSessionLog(logs, in.SessionID)
	var got ops.Recalled
	err = e.withModelEngine(ctx, "", forQuery, func(eng *engine.Engine) error {
		got, err = ops.ForPrompt(ctx, eng, ops.PromptRecall{
			Prompt: in.Prompt, Project: project, BudgetTokens: budget, Seen: log.Has,
			OmitStale: cfg.Recall.Stale == config.StaleOmit, MinEvidence: &cfg.Recall.PromptMinEvidence, Now: e.clock(),
		})
		return err
	})
	if err != nil || got.Text == "" {
		return err
	}
	e.recordRecalled(log, got.IDs)
	return e.printHookContext(in.HookEventName, got.Text)
}

// recordRecalled adds ids to the session's recall log. A log that cannot
// be written only means a later prompt may recall them again.
func (e *env) recordRecalled(log *ops.SessionLog, ids []int64) {
	log.Add(ids...)
	if err := log.Save(); err != nil {
		fmt.Fprintf(e.stderr, "cairn hook: %v\n", err)
	}
}

// printHookContext prints text as the context a hook adds, in the JSON
// output Claude Code, Codex and Gemini CLI all read.
func (e *env) printHookContext(event, text string) error {
	return e.printJSON(map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName":     event,
		"additionalContext": text,
	}})
}

// forgetRecallSession drops an ended session's recall log.
func (e *env) forgetRecallSession(sessionID string) error {
	dir, err := e.resolveDataDir()
	if err != nil {
		return err
	}
	return ops.ForgetSession(filepath.Join(dir, recallSessionsDir), sessionID)
}

func (e *env) clock() time.Time {
	if e.now != nil {
		return e.now()
	}
	return time.Now()
}

// projectOf names the project of a working directory the way the memory
// instruction tells agents to: the top directory of its git repository
// (else the directory itself), made a valid project id. sub is the
// working directory's path below that top ("" at the top).
func projectOf(cwd string) (project, sub string) {
	project, root := engine.ProjectOf(cwd)
	if rel, err := filepath.Rel(root, filepath.Clean(cwd)); project != "" && err == nil && rel != "." {
		sub = filepath.ToSlash(rel)
	}
	return project, sub
}
