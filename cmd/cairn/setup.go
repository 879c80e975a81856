package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn/cmd/cairn/agentsetup"
)

func setupCommand() *command {
	return &command{
		name:    "setup",
		summary: "wire cairn into an agent: MCP server, hooks, memory instruction (--uninstall reverses it)",
		usage:   "claude-code|codex|gemini [--dry-run] [--uninstall] [--home DIR] [--json]\n       claude-code --plugin DIR [--dry-run] [--uninstall]",
		examples: []string{
			`cairn setup claude-code --plugin ~/cairn-plugin && claude --plugin-dir ~/cairn-plugin`,
			`cairn setup claude-code --dry-run   # show every file it would touch and the diff`,
			`cairn setup claude-code`,
			`cairn setup codex --uninstall`,
		},
		run: runSetup,
	}
}

func runSetup(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	dryRun := fs.Bool("dry-run", false, "print the files it would change and the diffs; write nothing")
	uninstall := fs.Bool("uninstall", false, "remove what setup added (files setup alone changed get their exact bytes back)")
	home := fs.String("home", "", "home `DIR` whose agent files to edit (default: $HOME)")
	plugin := fs.String("plugin", "", "write a Claude Code plugin into `DIR` instead of editing the user's files (MCP server, hooks, memory instruction)")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef(c.name, "expected one agent: %s", strings.Join(agentsetup.Agents(), ", "))
	}
	agent := pos[0]
	if *plugin != "" && agent != agentsetup.ClaudeCode {
		return usagef(c.name, "--plugin writes a Claude Code plugin: use it with claude-code, not %s", agent)
	}
	opts, err := e.setupOptions(*home)
	if err != nil {
		return err
	}
	if *plugin != "" {
		return e.setupPlugin(*plugin, opts, *dryRun, *uninstall)
	}
	changes, err := agentsetup.Plan(agent, opts, *uninstall)
	if err != nil {
		if errors.Is(err, agentsetup.ErrUnknownAgent) {
			return usagef(c.name, "unknown agent %q: expected %s", agent, strings.Join(agentsetup.Agents(), ", "))
		}
		return err
	}
	if !*uninstall && isTemporary(opts.Binary) {
		fmt.Fprintf(e.stderr, "cairn setup: warning: %s looks temporary (go run, a test build); the agent will run that path\n", opts.Binary)
	}
	if !*dryRun {
		if err := agentsetup.Apply(agent, opts, changes, *uninstall); err != nil {
			return err
		}
	}
	return e.printSetup(agent, changes, *dryRun, *uninstall)
}

// setupPlugin writes (or removes) the Claude Code plugin in dir.
func (e *env) setupPlugin(dir string, opts agentsetup.Options, dryRun, uninstall bool) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	files, err := agentsetup.ClaudePlugin(opts, buildVersion())
	if err != nil {
		return err
	}
	var changes []agentsetup.PluginChange
	if uninstall {
		changes, err = agentsetup.RemovePlugin(dir, files, dryRun)
	} else {
		changes, err = agentsetup.WritePlugin(dir, files, dryRun)
	}
	if errors.Is(err, agentsetup.ErrNotOurs) {
		return usagef("setup", "%v", err)
	}
	if err != nil {
		return err
	}
	verb := map[[2]bool]string{{false, false}: "created", {false, true}: "would create", {true, false}: "removed", {true, true}: "would remove"}[[2]bool{uninstall, dryRun}]
	for _, ch := range changes {
		if e.json {
			if err := e.printJSON(map[string]any{"agent": agentsetup.ClaudeCode, "plugin": dir, "path": ch.Path, "changed": ch.Changed, "dry_run": dryRun, "uninstall": uninstall}); err != nil {
				return err
			}
			continue
		}
		if ch.Changed {
			fmt.Fprintf(e.stdout, "%-13s %s\n", verb, ch.Path)
		} else {
			fmt.Fprintf(e.stdout, "unchanged     %s\n", ch.Path)
		}
	}
	if !uninstall && !dryRun && !e.json {
		fmt.Fprintf(e.stdout, "Load it with: claude --plugin-dir %s (or add it to a plugin marketplace). Do not also run cairn setup claude-code:\nthe hooks would run twice.\n", dir)
	}
	return nil
}

// setupOptions resolves the home, this binary's absolute path and the
// absolute data dir the agent's cairn is to use.
func (e *env) setupOptions(home string) (agentsetup.Options, error) {
	if home == "" {
		home = e.getenv("HOME")
	}
	if home == "" {
		return agentsetup.Options{}, usagef("setup", "no home directory: set $HOME or --home")
	}
	home, err := filepath.Abs(home)
	if err != nil {
		return agentsetup.Options{}, err
	}
	bin, err := os.Executable()
	if err != nil {
		return agentsetup.Options{}, fmt.Errorf("setup: cannot find this binary's path: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(bin); err == nil {
		bin = resolved
	}
	dir, err := e.resolveDataDir()
	if err != nil {
		return agentsetup.Options{}, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return agentsetup.Options{}, err
	}
	return agentsetup.Options{Home: home, Getenv: e.getenv, Binary: bin, DataDir: dir, StateDir: filepath.Join(dir, "setup")}, nil
}

// isTemporary reports whether bin lives below the temp dir or Go's build
// cache, where `go run` and test builds put binaries that soon disappear.
func isTemporary(bin string) bool {
	dirs := []string{os.TempDir()}
	if cache, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(cache, "go-build"))
	}
	for _, dir := range dirs {
		if rel, err := filepath.Rel(dir, bin); err == nil && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}

func (e *env) printSetup(agent string, changes []agentsetup.Change, dryRun, uninstall bool) error {
	if e.json {
		for _, ch := range changes {
			row := map[string]any{"agent": agent, "path": ch.Path, "changed": ch.Changed(), "dry_run": dryRun, "uninstall": uninstall}
			if uninstall && ch.Changed() {
				row["exact"] = ch.Exact
			}
			if dryRun {
				row["diff"] = ch.Diff()
			}
			if err := e.printJSON(row); err != nil {
				return err
			}
		}
		return nil
	}
	w := e.stdout
	verb := map[bool]string{false: "changed", true: "would change"}[dryRun]
	n := 0
	for _, ch := range changes {
		if !ch.Changed() {
			fmt.Fprintf(w, "unchanged     %s\n", ch.Path)
			continue
		}
		n++
		how := ""
		switch {
		case uninstall && ch.Exact:
			how = " (restored as before setup)"
		case uninstall:
			how = " (cairn's entries removed; the file changed since setup)"
		case ch.After == nil:
			how = " (removed)"
		case ch.Before == nil:
			how = " (created)"
		}
		fmt.Fprintf(w, "%-13s %s%s\n", verb, ch.Path, how)
		if dryRun {
			fmt.Fprint(w, indentLines(ch.Diff(), "    "))
		}
	}
	switch {
	case n == 0 && uninstall:
		fmt.Fprintf(w, "%s: nothing of cairn's to remove\n", agent)
	case n == 0:
		fmt.Fprintf(w, "%s: already set up\n", agent)
	}
	if !uninstall && !dryRun && agent == agentsetup.Gemini {
		fmt.Fprintln(w, `Gemini CLI's stable channel runs hooks only with "hooksConfig": {"enabled": true} in its settings.json.`)
	}
	if !uninstall && !dryRun && agent == agentsetup.Codex {
		fmt.Fprintln(w, "Codex runs the recall hook (hooks.json) only with [features] codex_hooks = true in its config.toml.")
	}
	if !uninstall && !dryRun && agent == agentsetup.ClaudeCode {
		fmt.Fprintln(w, "Capture is opt-in: set [capture] session_end = true and/or pre_compact = true in config.toml (cairn config path)\nto import each session's transcript when it ends or before it is compacted. Restart Claude Code to load the changes.")
	}
	return nil
}

func indentLines(s, prefix string) string {
	if s == "" {
		return ""
	}
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}
