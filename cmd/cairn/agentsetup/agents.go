package agentsetup

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Agent names accepted by Plan.
const (
	ClaudeCode = "claude-code"
	Codex      = "codex"
	Gemini     = "gemini"
)

// Agents lists the agents setup knows, in help order.
func Agents() []string { return []string{ClaudeCode, Codex, Gemini} }

// ServerName is the name cairn's MCP server is registered under.
const ServerName = "cairn"

// Hook timeouts: recall must not delay the session start; capture reads
// one transcript.
const (
	recallTimeoutSeconds  = 10
	captureTimeoutSeconds = 60
)

// Instruction is the memory instruction setup puts into the agents'
// instruction files (between markers) and the Claude Code plugin's
// session-start hook prints.
func Instruction() string { return instruction }

const instruction = `## Memory (cairn)
You have a long-term memory through the cairn MCP server (tools search_messages, store_message, get_message, ...).
- Before starting on a task, search it for earlier decisions, patterns and notes about this project.
- When you decide something, learn a pattern or hit a pitfall worth remembering, store it as a short note with
  the project set to the name of the repository's top directory and a type: decision, pattern, policy or reflection.
- Never store secrets.`

// file is one file an agent's setup edits.
type file struct {
	path    string
	mode    uint32 // for a file setup creates
	install func(data []byte) ([]byte, error)
	remove  func(data []byte) ([]byte, error)
}

// agentFiles returns the files setup edits for agent.
func agentFiles(agent string, o Options) ([]file, error) {
	home := o.Home
	getenv := o.getenv()
	mcpArgs := []string{"mcp", "--data-dir", o.DataDir}
	hookCmd := func(a string) string {
		return shellQuote(o.Binary) + " hook " + a + " --data-dir " + shellQuote(o.DataDir)
	}
	md := func(path string) file {
		return file{path: path, mode: 0o644,
			install: func(d []byte) ([]byte, error) { return setMarkedBlock(d, instruction), nil },
			remove:  func(d []byte) ([]byte, error) { return removeMarkedBlock(d), nil }}
	}
	switch agent {
	case ClaudeCode:
		dir, state := filepath.Join(home, ".claude"), filepath.Join(home, ".claude.json")
		if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
			dir, state = d, filepath.Join(d, ".claude.json")
		}
		server := newObject()
		server.set("type", "stdio")
		server.set("command", o.Binary)
		server.set("args", stringsToAny(mcpArgs))
		server.set("env", newObject())
		events := claudeEvents(hookCmd(ClaudeCode), "")
		return []file{
			jsonFile(state, func(doc *object) error { return setServer(doc, server) }, removeServer),
			jsonFile(filepath.Join(dir, "settings.json"),
				func(doc *object) error { return setHooks(doc, events, ClaudeCode) },
				func(doc *object) error { return removeHooks(doc, ClaudeCode) }),
			md(filepath.Join(dir, "CLAUDE.md")),
		}, nil
	case Codex:
		dir := filepath.Join(home, ".codex")
		if d := getenv("CODEX_HOME"); d != "" {
			dir = d
		}
		quoted := make([]string, len(mcpArgs))
		for i, a := range mcpArgs {
			quoted[i] = tomlString(a)
		}
		events := []hookEvent{
			{name: "SessionStart", entry: claudeHook(hookCmd(Codex), recallTimeoutSeconds)},
			{name: "UserPromptSubmit", entry: claudeHook(hookCmd(Codex), recallTimeoutSeconds)},
		}
		table := "[mcp_servers." + ServerName + "]\n" +
			"command = " + tomlString(o.Binary) + "\n" +
			"args = [" + strings.Join(quoted, ", ") + "]\n"
		return []file{
			{path: filepath.Join(dir, "config.toml"), mode: 0o600,
				install: func(d []byte) ([]byte, error) { return setTOMLTable(d, "mcp_servers", ServerName, table) },
				remove:  func(d []byte) ([]byte, error) { return removeTOMLTable(d, "mcp_servers", ServerName), nil }},
			// Codex runs hooks.json (Claude Code's format) only with
			// [features] codex_hooks = true, which stays the user's choice.
			jsonFile(filepath.Join(dir, "hooks.json"),
				func(doc *object) error { return setHooks(doc, events, Codex) },
				func(doc *object) error { return removeHooks(doc, Codex) }),
			md(filepath.Join(dir, "AGENTS.md")),
		}, nil
	case Gemini:
		dir := filepath.Join(home, ".gemini")
		server := newObject()
		server.set("command", o.Binary)
		server.set("args", stringsToAny(mcpArgs))
		hook := func(name string) *object {
			h := newObject()
			h.set("name", name)
			h.set("type", "command")
			h.set("command", hookCmd(Gemini))
			h.set("timeout", recallTimeoutSeconds*1000) // Gemini CLI counts milliseconds
			return h
		}
		// BeforeAgent is Gemini CLI's UserPromptSubmit: after the prompt,
		// before the agent plans; it takes the same additionalContext.
		events := []hookEvent{{name: "SessionStart", entry: hook("cairn-recall")}, {name: "BeforeAgent", entry: hook("cairn-prompt-recall")}}
		return []file{
			jsonFile(filepath.Join(dir, "settings.json"), func(doc *object) error {
				if err := setServer(doc, server); err != nil {
					return err
				}
				return setHooks(doc, events, Gemini)
			}, func(doc *object) error {
				if err := removeServer(doc); err != nil {
					return err
				}
				return removeHooks(doc, Gemini)
			}),
			md(filepath.Join(dir, "GEMINI.md")),
		}, nil
	}
	return nil, fmt.Errorf("%w: %q (want one of %s)", ErrUnknownAgent, agent, strings.Join(Agents(), ", "))
}

// ErrUnknownAgent is returned for an agent name setup does not know.
var ErrUnknownAgent = errors.New("agentsetup: unknown agent")

// claudeEvents are the hooks Claude Code runs: recall at session start
// (startArgs appended to its command) and on every prompt, capture when a
// session ends or is compacted.
func claudeEvents(cmd, startArgs string) []hookEvent {
	return []hookEvent{
		{name: "SessionStart", entry: claudeHook(cmd+startArgs, recallTimeoutSeconds)},
		{name: "UserPromptSubmit", entry: claudeHook(cmd, recallTimeoutSeconds)},
		{name: "SessionEnd", entry: claudeHook(cmd, captureTimeoutSeconds)},
		{name: "PreCompact", entry: claudeHook(cmd, captureTimeoutSeconds)},
	}
}

func claudeHook(cmd string, timeout int) *object {
	h := newObject()
	h.set("type", "command")
	h.set("command", cmd)
	h.set("timeout", timeout)
	return h
}

func stringsToAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// jsonFile edits a JSON file through its ordered object.
func jsonFile(path string, install, remove func(*object) error) file {
	edit := func(f func(*object) error) func([]byte) ([]byte, error) {
		return func(data []byte) ([]byte, error) {
			doc, err := parseJSONObject(data)
			if err != nil {
				return nil, fmt.Errorf("not valid JSON (fix it first): %w", err)
			}
			if err := f(doc); err != nil {
				return nil, err
			}
			return encodeJSON(doc, indentOf(data)), nil
		}
	}
	return file{path: path, mode: 0o600, install: edit(install), remove: edit(remove)}
}

func setServer(doc *object, server *object) error {
	servers, ok := doc.getObject("mcpServers")
	if !ok {
		return errors.New("mcpServers is not an object")
	}
	servers.set(ServerName, server)
	return nil
}

func removeServer(doc *object) error {
	v, ok := doc.get("mcpServers")
	if !ok {
		return nil
	}
	servers, ok := v.(*object)
	if !ok {
		return nil
	}
	servers.del(ServerName)
	if servers.len() == 0 {
		doc.del("mcpServers")
	}
	return nil
}

// hookEvent is one hook setup installs: the event and its hook entry.
type hookEvent struct {
	name  string
	entry *object
}

// isOurHook reports whether a hook entry runs `cairn hook AGENT`.
func isOurHook(v any, agent string) bool {
	h, ok := v.(*object)
	if !ok {
		return false
	}
	c, _ := h.vals["command"].(string)
	return strings.Contains(c, " hook "+agent) && strings.Contains(c, "cairn")
}

// setHooks installs each event's entry: in place of cairn's existing entry
// for that event (other copies removed), else in a new matcher group at the
// end.
func setHooks(doc *object, events []hookEvent, agent string) error {
	hooks, ok := doc.getObject("hooks")
	if !ok {
		return errors.New("hooks is not an object")
	}
	for _, ev := range events {
		v, _ := hooks.get(ev.name)
		groups, ok := v.([]any)
		if v != nil && !ok {
			return fmt.Errorf("hooks.%s is not an array", ev.name)
		}
		kept, placed, _ := replaceOurHooks(groups, agent, ev.entry)
		if !placed {
			grp := newObject()
			grp.set("hooks", []any{ev.entry})
			kept = append(kept, grp)
		}
		hooks.set(ev.name, kept)
	}
	return nil
}

// removeHooks removes cairn's hook entries for agent, the groups and
// events left empty, and hooks itself when it is left empty.
func removeHooks(doc *object, agent string) error {
	v, ok := doc.get("hooks")
	if !ok {
		return nil
	}
	hooks, ok := v.(*object)
	if !ok {
		return nil
	}
	for _, name := range append([]string(nil), hooks.keys...) {
		groups, ok := hooks.vals[name].([]any)
		if !ok {
			continue
		}
		kept, _, changed := replaceOurHooks(groups, agent, nil)
		switch {
		case !changed:
		case len(kept) == 0:
			hooks.del(name)
		default:
			hooks.set(name, kept)
		}
	}
	if hooks.len() == 0 {
		doc.del("hooks")
	}
	return nil
}

// replaceOurHooks puts entry in place of the first of cairn's hook entries
// in an event's matcher groups and drops the others (all of them when
// entry is nil), dropping groups left empty. placed says entry was put in.
func replaceOurHooks(groups []any, agent string, entry *object) (kept []any, placed, changed bool) {
	for _, g := range groups {
		grp, ok := g.(*object)
		if !ok {
			kept = append(kept, g)
			continue
		}
		list, _ := grp.vals["hooks"].([]any)
		var out []any
		replaced := false
		for _, h := range list {
			switch {
			case !isOurHook(h, agent):
				out = append(out, h)
			case entry != nil && !placed:
				out = append(out, entry)
				placed, replaced = true, true
			}
		}
		if len(out) == 0 && len(list) > 0 {
			changed = true
			continue // a group that held only cairn's entries
		}
		if replaced || len(out) != len(list) {
			grp.set("hooks", out)
			changed = true
		}
		kept = append(kept, grp)
	}
	return kept, placed, changed
}

// shellQuote quotes s for the POSIX shell the agents run hook commands
// with; plain paths stay as they are.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
