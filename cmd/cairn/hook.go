package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/cmd/cairn/agentsetup"
	"github.com/cairn-dev/cairn/cmd/cairn/config"
	"github.com/cairn-dev/cairn/engine"
)

func hookCommand() *command {
	return &command{
		name:    "hook",
		summary: "run as an agent's hook (installed by cairn setup): recall at session start, capture at session end",
		usage:   "claude-code|codex|gemini [--data-dir DIR]   (reads the hook's JSON on stdin)",
		examples: []string{
			`echo '{"hook_event_name":"SessionStart","cwd":"'$PWD'"}' | cairn hook claude-code`,
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
}

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
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
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
	case "SessionStart":
		ctx, cancel := context.WithTimeout(ctx, recallHookTimeout)
		defer cancel()
		return e.hookRecall(ctx, in)
	case "SessionEnd", "PreCompact":
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
		rep, err := eng.Sessions().Import(ctx, opts)
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

// recallTypes are the record types recall lists, in the order of its
// sections.
var recallTypes = []struct{ typ, title string }{
	{engine.TypePolicy, "Policies"},
	{engine.TypeDecision, "Decisions"},
	{engine.TypePattern, "Patterns"},
	{engine.TypeReflection, "Notes"},
}

// recallItemBytes bounds one record's text in the recall.
const recallItemBytes = 600

// hookRecall prints the project's memory as the SessionStart hook output
// that adds context: {"hookSpecificOutput": {"hookEventName":
// "SessionStart", "additionalContext": TEXT}}. It prints nothing when
// recall is off, the store does not exist yet or holds nothing for the
// project.
func (e *env) hookRecall(ctx context.Context, in hookInput) error {
	cfg, _, err := e.loadConfig()
	if err != nil {
		return err
	}
	if !cfg.Recall.SessionStart || cfg.Recall.MaxItems == 0 || cfg.Recall.MaxBytes == 0 {
		return nil
	}
	dir, err := e.resolveDataDir()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, engine.DBFile)); errors.Is(err, os.ErrNotExist) {
		return nil // a read never creates the store (setup may have made the dir only)
	}
	project, sub := projectOf(in.CWD)
	if project == "" {
		return nil
	}
	var picked []recallItem
	err = e.withEngine(ctx, func(eng *engine.Engine) error {
		picked, err = recallItems(ctx, eng, project, sub, cfg.Recall, e.clock())
		return err
	})
	if err != nil || len(picked) == 0 {
		return err
	}
	text := recallText(project, picked, cfg.Recall.MaxBytes)
	return e.printJSON(map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName":     "SessionStart",
		"additionalContext": text,
	}})
}

func (e *env) clock() time.Time {
	if e.now != nil {
		return e.now()
	}
	return time.Now()
}

type recallItem struct {
	msg   engine.Message
	score float64
}

// recallItems returns the project's notes, decisions, patterns and
// policies, best first by the quality profile (relevance .4, recency .1
// with a 30-day half-life, confidence .5). Relevance is 1 for a record
// that names the working directory (its path below the project root, or
// its name) and 0.5 for the rest of the project.
//
// The candidates are the newest MaxItems records of each of the
// project's channels (project:{p}:decisions|patterns|policies and every
// agent's agent-notes:{agent}:{p}): one indexed range read per channel,
// where one query over all of them would read and sort every record of
// the project.
func recallItems(ctx context.Context, eng *engine.Engine, project, sub string, rc config.Recall, now time.Time) ([]recallItem, error) {
	wanted := map[string]bool{}
	for _, t := range recallTypes {
		wanted[t.typ] = true
	}
	seen := map[string]bool{}
	var items []recallItem
	for _, scope := range []engine.Scope{{Kind: engine.ScopeProject, Project: project}, {Kind: engine.ScopeNotes, Project: project}} {
		chans, err := eng.ListChannels(ctx, scope)
		if err != nil {
			return nil, err
		}
		for _, ch := range chans {
			if seen[ch.ID] {
				continue
			}
			seen[ch.ID] = true
			ms, err := eng.GetChannelMessages(ctx, ch.ID, 0, rc.MaxItems)
			if err != nil {
				return nil, err
			}
			for _, m := range ms {
				if !wanted[m.MessageType] || m.SupersededBy != 0 {
					continue
				}
				rel := 0.5
				if sub == "" || mentionsDir(m.Content, sub) {
					rel = 1
				}
				rec := math.Exp(-math.Ln2 * max(now.Sub(m.CreatedAt).Hours(), 0) / 720)
				items = append(items, recallItem{msg: m, score: 0.4*rel + 0.1*rec + 0.5*m.Confidence})
			}
		}
	}
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].score != items[j].score {
			return items[i].score > items[j].score
		}
		return items[i].msg.ID > items[j].msg.ID
	})
	if len(items) > rc.MaxItems {
		items = items[:rc.MaxItems]
	}
	return items, nil
}

func mentionsDir(content, sub string) bool {
	return strings.Contains(content, sub) || strings.Contains(content, filepath.Base(sub))
}

// recallText lays the items out by section, best first within each,
// stopping before maxBytes.
func recallText(project string, items []recallItem, maxBytes int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Memory from cairn for project %q (the most useful records; search for more with the cairn MCP tools):\n", project)
	for _, sec := range recallTypes {
		wroteTitle := false
		for _, it := range items {
			if it.msg.MessageType != sec.typ {
				continue
			}
			line := fmt.Sprintf("- [#%d %s, confidence %.2f] %s\n", it.msg.ID, it.msg.CreatedAt.UTC().Format("2006-01-02"), it.msg.Confidence, oneLine(it.msg.Content, recallItemBytes))
			title := ""
			if !wroteTitle {
				title = sec.title + ":\n"
			}
			if b.Len()+len(title)+len(line) > maxBytes {
				return b.String()
			}
			b.WriteString(title + line)
			wroteTitle = true
		}
	}
	return b.String()
}

// oneLine folds s onto one line and cuts it to at most n bytes on a rune
// boundary.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// projectOf names the project of a working directory (engine.ProjectOf)
// and sub, the working directory's path below the project's root ("" at
// the root).
func projectOf(cwd string) (project, sub string) {
	project, root := engine.ProjectOf(cwd)
	if rel, err := filepath.Rel(root, filepath.Clean(cwd)); project != "" && err == nil && rel != "." {
		sub = filepath.ToSlash(rel)
	}
	return project, sub
}
