// Package ccfixture writes realistic Claude Code session files for tests and
// benchmarks, following the format described in package claudecode: several
// projects, user and assistant turns with text, thinking, tool calls and tool
// results, branches (two children of one parent, as after an edited prompt),
// compactions (a summary record, a compact_boundary system record and an
// isCompactSummary user message whose parentUuid is null), sub-agent
// sidechain files and records without content (file-history-snapshot).
//
// Output is a pure function of Options (including the seed of Options.Rand),
// so tests can regenerate the same tree. Not safe for concurrent use of one
// *rand.Rand. Imports nothing from the project.
package ccfixture

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Options shape the generated tree. Zero fields take the defaults shown.
type Options struct {
	Rand               *rand.Rand // required
	Projects           int        // 3
	SessionsPerProject int        // 2
	Turns              int        // user/assistant exchanges per session: 12
	Start              time.Time  // 2026-01-05T09:00:00Z
	// SharedInstruction is sent as the first user message of every session
	// (agentic workflows repeat it), so content deduplication has work.
	SharedInstruction string
	// Secret, when set, is pasted into one tool result of the first session.
	Secret string
	// Compact adds a compaction halfway through every other session.
	Compact bool
	// Branch adds an edited-prompt branch to every session.
	Branch bool
	// Sidechain adds a sub-agent file to the first session of each project.
	Sidechain bool
}

// Session describes one generated session.
type Session struct {
	ID       string
	Project  string // folder name
	Path     string // main file
	Paths    []string
	Records  int      // usable records (user, assistant, system, summary) over all its files
	Messages []string // uuids in file order (main file, then sidechain)
}

// Tree is what Write produced.
type Tree struct {
	Root     string
	Sessions []Session
}

// Records returns the usable records over all sessions.
func (t *Tree) Records() int {
	n := 0
	for _, s := range t.Sessions {
		n += s.Records
	}
	return n
}

func (o *Options) defaults() {
	if o.Projects == 0 {
		o.Projects = 3
	}
	if o.SessionsPerProject == 0 {
		o.SessionsPerProject = 2
	}
	if o.Turns == 0 {
		o.Turns = 12
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	}
}

// UUID returns a random version-4 UUID from rng.
func UUID(rng *rand.Rand) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// EncodeProject turns a working directory into Claude Code's folder name.
func EncodeProject(cwd string) string {
	var b strings.Builder
	for _, r := range cwd {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

var (
	topics = []string{"the SQLite migration", "the FTS5 tokenizer", "flaky CI on arm64", "HNSW recall", "the MCP server", "retention policies", "the backup archive", "JSON export", "rate limiting", "the login redirect"}
	tools  = []string{"Bash", "Read", "Edit", "Grep", "Glob", "Write"}
	files  = []string{"engine/engine.go", "fts/query.go", "cmd/cairn/main.go", "index/hnsw.go", "README.md", "Makefile"}
)

// Write creates the tree under root (which must exist).
func Write(root string, opts Options) (*Tree, error) {
	opts.defaults()
	if opts.Rand == nil {
		return nil, fmt.Errorf("ccfixture: Options.Rand is required")
	}
	tr := &Tree{Root: root}
	clock := opts.Start
	for p := range opts.Projects {
		cwd := fmt.Sprintf("/home/dev/src/project-%d", p)
		proj := EncodeProject(cwd)
		dir := filepath.Join(root, proj)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		for s := range opts.SessionsPerProject {
			g := &gen{rng: opts.Rand, opts: opts, cwd: cwd, sid: UUID(opts.Rand), clock: clock, branch: []string{"main", "feature/x"}[s%2]}
			idx := p*opts.SessionsPerProject + s
			g.session(idx)
			sess := Session{ID: g.sid, Project: proj, Path: filepath.Join(dir, g.sid+".jsonl"), Records: g.usable, Messages: g.uuids}
			if err := writeLines(sess.Path, g.lines); err != nil {
				return nil, err
			}
			sess.Paths = append(sess.Paths, sess.Path)
			if opts.Sidechain && s == 0 {
				sg := &gen{rng: opts.Rand, opts: opts, cwd: cwd, sid: g.sid, clock: g.clock, branch: g.branch, sidechain: true}
				sg.agent()
				agentID := fmt.Sprintf("%08x", opts.Rand.Uint32())
				ap := filepath.Join(dir, "agent-"+agentID+".jsonl")
				// Every record of a sub-agent file names its agent, as
				// Claude Code writes them.
				for i, l := range sg.lines {
					sg.lines[i] = append(l[:len(l)-1:len(l)-1], `,"agentId":"`+agentID+`"}`...)
				}
				if err := writeLines(ap, sg.lines); err != nil {
					return nil, err
				}
				sess.Paths = append(sess.Paths, ap)
				sess.Records += sg.usable
				sess.Messages = append(sess.Messages, sg.uuids...)
			}
			clock = g.clock.Add(time.Hour)
			tr.Sessions = append(tr.Sessions, sess)
		}
	}
	return tr, nil
}

// WriteSession writes one session of n user/assistant exchanges (no
// branches or compactions) to path and returns its id and record count.
func WriteSession(path string, rng *rand.Rand, n int) (string, int, error) {
	g := &gen{rng: rng, opts: Options{Turns: n}, cwd: "/home/dev/src/bench", sid: UUID(rng), clock: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), branch: "main"}
	for i := range n {
		g.turn(i, fmt.Sprintf("Step %d: continue with %s.", i, topics[i%len(topics)]))
	}
	return g.sid, g.usable, writeLines(path, g.lines)
}

func writeLines(path string, lines [][]byte) error {
	var b []byte
	for _, l := range lines {
		b = append(b, l...)
		b = append(b, '\n')
	}
	return os.WriteFile(path, b, 0o600)
}

type gen struct {
	rng       *rand.Rand
	opts      Options
	cwd, sid  string
	branch    string
	clock     time.Time
	parent    string
	sidechain bool
	lines     [][]byte
	usable    int
	uuids     []string
}

func (g *gen) tick() string {
	g.clock = g.clock.Add(time.Duration(1+g.rng.IntN(20000)) * time.Millisecond)
	return g.clock.Format("2006-01-02T15:04:05.000Z")
}

// emit writes a record with the common envelope fields.
func (g *gen) emit(typ string, message map[string]any, extra map[string]any) string {
	id := UUID(g.rng)
	rec := map[string]any{
		"parentUuid":  nilIfEmpty(g.parent),
		"isSidechain": g.sidechain,
		"userType":    "external",
		"cwd":         g.cwd,
		"sessionId":   g.sid,
		"version":     "2.0.61",
		"gitBranch":   g.branch,
		"type":        typ,
		"uuid":        id,
		"timestamp":   g.tick(),
	}
	if message != nil {
		rec["message"] = message
	}
	for k, v := range extra {
		rec[k] = v
	}
	g.add(rec)
	g.usable++
	g.uuids = append(g.uuids, id)
	g.parent = id
	return id
}

func (g *gen) add(rec map[string]any) {
	b, err := json.Marshal(rec)
	if err != nil {
		panic(err) // maps of plain values always marshal
	}
	g.lines = append(g.lines, b)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (g *gen) user(text string) string {
	return g.emit("user", map[string]any{"role": "user", "content": text}, nil)
}

func (g *gen) assistant(blocks []any) string {
	return g.emit("assistant", map[string]any{
		"id": "msg_" + fmt.Sprintf("%016x", g.rng.Uint64()), "type": "message", "role": "assistant",
		"model": "claude-sonnet-4-5-20250929", "content": blocks, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 3 + g.rng.IntN(4000), "output_tokens": 1 + g.rng.IntN(900), "cache_read_input_tokens": g.rng.IntN(90000)},
	}, map[string]any{"requestId": fmt.Sprintf("req_%016x", g.rng.Uint64())})
}

func (g *gen) toolResult(id, text string, isErr bool) string {
	return g.emit("user", map[string]any{"role": "user", "content": []any{
		map[string]any{"tool_use_id": id, "type": "tool_result", "content": text, "is_error": isErr},
	}}, map[string]any{"toolUseResult": map[string]any{"stdout": text, "stderr": "", "interrupted": false}})
}

func (g *gen) turn(i int, prompt string) {
	g.user(prompt)
	topic := topics[g.rng.IntN(len(topics))]
	thinking := map[string]any{"type": "thinking", "thinking": "The user wants progress on " + topic + ". I should look at the code first.", "signature": fmt.Sprintf("Eu%016xQ==", g.rng.Uint64())}
	text := map[string]any{"type": "text", "text": fmt.Sprintf("Let me check %s.\n\n```go\nfunc step%d() error {\n\treturn nil\n}\n```", files[g.rng.IntN(len(files))], i)}
	if g.rng.IntN(3) == 0 {
		g.assistant([]any{thinking, text})
		return
	}
	tool := tools[g.rng.IntN(len(tools))]
	tid := fmt.Sprintf("toolu_%016x", g.rng.Uint64())
	input := map[string]any{"command": "go test ./engine/...", "description": "Run engine tests"}
	if tool != "Bash" {
		input = map[string]any{"file_path": g.cwd + "/" + files[g.rng.IntN(len(files))]}
	}
	g.assistant([]any{text, map[string]any{"type": "tool_use", "id": tid, "name": tool, "input": input}})
	out := fmt.Sprintf("ok  \tgithub.com/example/project/engine\t%d.%03ds", g.rng.IntN(9), g.rng.IntN(1000))
	g.toolResult(tid, out, g.rng.IntN(10) == 0)
	g.assistant([]any{map[string]any{"type": "text", "text": "Tests pass. Next I will look at " + topic + "."}})
}

func (g *gen) session(idx int) {
	// A snapshot record without content, as Claude Code writes first.
	g.add(map[string]any{"type": "file-history-snapshot", "messageId": UUID(g.rng), "snapshot": map[string]any{"trackedFileBackups": map[string]any{}}, "isSnapshotUpdate": false})
	if g.opts.SharedInstruction != "" {
		g.user(g.opts.SharedInstruction)
		g.assistant([]any{map[string]any{"type": "text", "text": "Understood."}})
	}
	for i := range g.opts.Turns {
		prompt := fmt.Sprintf("Please work on %s (step %d of session %d).", topics[(idx+i)%len(topics)], i, idx)
		if i == 1 && g.opts.Secret != "" && idx == 0 {
			g.user("Here is the failing deploy log.")
			tid := fmt.Sprintf("toolu_%016x", g.rng.Uint64())
			g.assistant([]any{map[string]any{"type": "tool_use", "id": tid, "name": "Bash", "input": map[string]any{"command": "cat deploy.log"}}})
			g.toolResult(tid, "deploy failed: token "+g.opts.Secret+" rejected", true)
		}
		if g.opts.Branch && i == g.opts.Turns/3 {
			// The user edits the prompt: a second child of the same parent.
			fork := g.parent
			g.turn(i, prompt)
			g.parent = fork
			prompt = "Actually, " + prompt
		}
		if g.opts.Compact && idx%2 == 0 && i == g.opts.Turns/2 {
			leaf := g.parent
			g.add(map[string]any{"type": "summary", "summary": fmt.Sprintf("Session %d: worked on %s", idx, topics[idx%len(topics)]), "leafUuid": leaf})
			g.usable++
			g.emit("system", nil, map[string]any{"subtype": "compact_boundary", "content": "Conversation compacted", "level": "info", "compactMetadata": map[string]any{"trigger": "auto", "preTokens": 150000 + g.rng.IntN(10000)}, "logicalParentUuid": leaf})
			g.parent = ""
			g.emit("user", map[string]any{"role": "user", "content": "This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nWe worked on " + topics[idx%len(topics)] + "."}, map[string]any{"isCompactSummary": true, "isVisibleInTranscriptOnly": true})
		}
		g.turn(i, prompt)
	}
}

func (g *gen) agent() {
	g.parent = ""
	g.user("Search the repository for uses of " + topics[g.rng.IntN(len(topics))] + " and report back.")
	for i := range 3 {
		g.turn(i, fmt.Sprintf("Continue the search (%d).", i))
	}
}
