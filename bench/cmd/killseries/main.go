// Command killseries is the SIGKILL series: writers of four kinds share one
// data dir (`cairn note` processes, the cairn API of `cairn serve`, Chroma
// records and deletes through the same `cairn serve`, and store_message
// through `cairn mcp` over the official MCP client), while a killer sends
// SIGKILL to serve, mcp or a running CLI writer at random moments, and
// restarts what it killed. At the end it checks that every acknowledged
// message is stored exactly once, every acknowledged Chroma record is
// present, no record whose delete was acknowledged came back, and that
// `cairn check` is clean (also every --check-every kills, writers paused).
//
//	go run ./bench/cmd/killseries --kills 300
//	go run ./bench/cmd/killseries --minutes 25 --json
//
// It exits 1 when a check fails.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/bench"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "killseries:", err)
		os.Exit(1)
	}
}

// report is the series' outcome (--json).
type report struct {
	Kills        map[string]int `json:"kills"`        // by process kind: serve, mcp, cli
	Acknowledged map[string]int `json:"acknowledged"` // writes by writer kind
	Unanswered   map[string]int `json:"unanswered"`   // writes whose answer the kill cut off
	Refused      map[string]int `json:"refused"`      // writes answered with an error
	RefusedFirst []string       `json:"refused_first,omitempty"`
	ChromaAdded  int            `json:"chroma_added"`   // acknowledged Chroma records
	ChromaDelete int            `json:"chroma_delete"`  // acknowledged Chroma delete requests
	ChromaGone   int            `json:"chroma_deleted"` // records whose delete was acknowledged
	Lost         int            `json:"lost"`           // acknowledged messages or records missing
	Duplicated   int            `json:"duplicated"`     // messages stored more than once
	Resurrected  int            `json:"resurrected"`    // records present after an acknowledged delete
	Checks       int            `json:"checks"`         // `cairn check` runs, all clean when Failures is empty
	Failures     []string       `json:"failures,omitempty"`
	Seconds      float64        `json:"seconds"`
	Seed         uint64         `json:"seed"`
	Model        string         `json:"model"`
}

func run() error {
	kills := flag.Int("kills", 60, "SIGKILLs to send (the series ends at --kills or --minutes, whichever comes first)")
	minutes := flag.Float64("minutes", 0, "wall-clock `MINUTES` to run (0: until --kills)")
	checkEvery := flag.Int("check-every", 25, "pause the writers and run `cairn check` every `N` kills")
	bin := flag.String("cairn", "", "cairn `BINARY` (default: go build ./cmd/cairn)")
	model := flag.String("model", "builtin", "embedding model of every process: builtin, or none for keyword only")
	seed := flag.Uint64("seed", uint64(time.Now().UnixNano()), "random `SEED` of the kill moments and victims")
	dir := flag.String("dir", "", "data `DIR` (default: a new temporary one, removed at the end)")
	pace := flag.Duration("pace", 20*time.Millisecond, "pause of each writer between two writes")
	asJSON := flag.Bool("json", false, "print the report as JSON")
	flag.Parse()
	if *kills < 1 {
		return errors.New("--kills must be at least 1")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	tmp, err := os.MkdirTemp("", "killseries-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if *bin == "" {
		if *bin, err = bench.BuildCairnBinary(ctx, tmp); err != nil {
			return err
		}
	}
	data := *dir
	if data == "" {
		data = filepath.Join(tmp, "data")
	}
	s := &series{bin: *bin, pace: *pace, data: data, model: *model, rng: rand.New(rand.NewPCG(*seed, *seed^0x9e3779b97f4a7c15)),
		run:  fmt.Sprintf("%x", *seed%0xffffff),
		clis: map[*exec.Cmd]bool{}, acked: map[string]bool{}, tried: map[string]bool{}, added: map[string]bool{}, deleted: map[string]bool{}, limbo: map[string]bool{},
		rep: report{Kills: map[string]int{}, Acknowledged: map[string]int{}, Unanswered: map[string]int{}, Refused: map[string]int{}, Seed: *seed, Model: *model}}
	start := time.Now()
	var deadline time.Time
	if *minutes > 0 {
		deadline = start.Add(time.Duration(*minutes * float64(time.Minute)))
	}
	if err := s.series(ctx, *kills, deadline, *checkEvery); err != nil {
		return err
	}
	s.rep.Seconds = time.Since(start).Seconds()
	if *asJSON {
		b, _ := json.Marshal(s.rep)
		fmt.Println(string(b))
	} else {
		r := s.rep
		fmt.Printf("kills: %d serve, %d mcp, %d cli in %.0f s (seed %d, model %s)\n", r.Kills["serve"], r.Kills["mcp"], r.Kills["cli"], r.Seconds, r.Seed, r.Model)
		fmt.Printf("acknowledged: %d cli notes, %d cairn API notes, %d MCP store_message, %d Chroma records, %d Chroma deletes (%d records)\n",
			r.Acknowledged["cli"], r.Acknowledged["api"], r.Acknowledged["mcp"], r.ChromaAdded, r.ChromaDelete, r.ChromaGone)
		fmt.Printf("unanswered (cut off by a kill): %v; refused: %v %q\n", r.Unanswered, r.Refused, r.RefusedFirst)
		fmt.Printf("lost %d, duplicated %d, resurrected %d; cairn check clean %d of %d times\n", r.Lost, r.Duplicated, r.Resurrected, r.Checks-len(r.Failures), r.Checks)
		for _, f := range r.Failures {
			fmt.Println("FAIL:", f)
		}
	}
	if len(s.rep.Failures) > 0 || s.rep.Lost+s.rep.Duplicated+s.rep.Resurrected > 0 {
		os.Exit(1)
	}
	return nil
}

// series is one run's processes and what its writers were told.
type series struct {
	bin, data, model, run string
	pace                  time.Duration

	rng   *rand.Rand
	rngMu sync.Mutex

	// pause is held shared by every write and exclusively by a check.
	pause sync.RWMutex

	mu      sync.Mutex
	serve   *exec.Cmd
	url     string
	mcpCmd  *exec.Cmd
	mcpSess *mcp.ClientSession
	clis    map[*exec.Cmd]bool
	n       int             // writes attempted
	acked   map[string]bool // message contents acknowledged
	tried   map[string]bool // message contents sent, answered or not
	added   map[string]bool // Chroma ids whose add was acknowledged
	deleted map[string]bool // Chroma ids whose delete was acknowledged
	limbo   map[string]bool // Chroma ids whose add or delete was not answered
	rep     report
}

func (s *series) intn(n int) int {
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return s.rng.IntN(n)
}

func (s *series) content(kind string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	c := fmt.Sprintf("killseries %s write %d of run %s", kind, s.n, s.run)
	s.tried[c] = true
	return c
}

// outcome records a write's answer: acknowledged (ok), refused with an
// error (refusal is its text) or none (cut off by a kill).
func (s *series) outcome(kind, content string, ok bool, refusal string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case ok:
		s.acked[content] = true
		s.rep.Acknowledged[kind]++
	case refusal != "":
		s.rep.Refused[kind]++
		if len(s.rep.RefusedFirst) < 5 {
			s.rep.RefusedFirst = append(s.rep.RefusedFirst, kind+": "+refusal)
		}
	default:
		s.rep.Unanswered[kind]++
	}
}

// refusal is the text of an HTTP answer that is not a success.
func refusal(code int, body []byte, err error) string {
	if err != nil || code/100 == 2 {
		return ""
	}
	return fmt.Sprintf("%d %s", code, bytes.TrimSpace(body))
}

// command is a cairn command line on the series' data dir and model.
func (s *series) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Env = append(os.Environ(), "CAIRN_DATA_DIR="+s.data, "CAIRN_MODEL="+s.model)
	return cmd
}

func (s *series) series(ctx context.Context, kills int, deadline time.Time, checkEvery int) error {
	if err := s.startServe(ctx); err != nil {
		return err
	}
	if err := s.startMCP(ctx); err != nil {
		return err
	}
	coll, err := s.createCollection(ctx)
	if err != nil {
		return err
	}
	wctx, stopWriters := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, w := range []func(context.Context){s.cliWriter, s.apiWriter, s.mcpWriter, func(ctx context.Context) { s.chromaWriter(ctx, coll) }} {
		wg.Add(1)
		go func() { defer wg.Done(); w(wctx) }()
	}
	for k := 1; k <= kills && ctx.Err() == nil && (deadline.IsZero() || time.Now().Before(deadline)); k++ {
		time.Sleep(time.Duration(200+s.intn(1800)) * time.Millisecond)
		victim := s.kill(ctx)
		s.mu.Lock()
		fmt.Fprintf(os.Stderr, "\rkill %d: %-5s (serve %d, mcp %d, cli %d; acknowledged %d)", k, victim, s.rep.Kills["serve"], s.rep.Kills["mcp"], s.rep.Kills["cli"], len(s.acked)+len(s.added))
		s.mu.Unlock()
		if checkEvery > 0 && k%checkEvery == 0 {
			s.pause.Lock()
			s.check(ctx, fmt.Sprintf("after kill %d", k))
			s.pause.Unlock()
		}
	}
	fmt.Fprintln(os.Stderr)
	stopWriters()
	wg.Wait()
	s.stopAll()
	s.check(ctx, "at the end")
	return s.verify(ctx, coll)
}

// kill sends SIGKILL to serve, mcp or a running CLI writer and restarts
// serve and mcp; it returns the victim's kind.
func (s *series) kill(ctx context.Context) string {
	for {
		switch s.intn(3) {
		case 0:
			s.mu.Lock()
			cmd := s.serve
			s.mu.Unlock()
			cmd.Process.Kill()
			cmd.Wait()
			s.countKill("serve")
			for s.startServe(ctx) != nil && ctx.Err() == nil {
				time.Sleep(100 * time.Millisecond)
			}
			return "serve"
		case 1:
			s.mu.Lock()
			cmd, sess := s.mcpCmd, s.mcpSess
			s.mu.Unlock()
			cmd.Process.Kill()
			sess.Close()
			s.countKill("mcp")
			for s.startMCP(ctx) != nil && ctx.Err() == nil {
				time.Sleep(100 * time.Millisecond)
			}
			return "mcp"
		default:
			s.mu.Lock()
			var victim *exec.Cmd
			for c := range s.clis {
				victim = c
				break
			}
			s.mu.Unlock()
			if victim == nil {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			if victim.Process.Kill() == nil {
				s.countKill("cli")
				return "cli"
			}
		}
	}
}

func (s *series) countKill(kind string) {
	s.mu.Lock()
	s.rep.Kills[kind]++
	s.mu.Unlock()
}

func (s *series) startServe(ctx context.Context) error {
	cmd := s.command(context.Background(), "serve", "--port", "0", "--json")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	var info struct{ URL string }
	if err == nil {
		err = json.Unmarshal([]byte(line), &info)
	}
	if err != nil || info.URL == "" {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("serve printed no address (%v): %q", err, line)
	}
	go io.Copy(io.Discard, out)
	s.mu.Lock()
	s.serve, s.url = cmd, info.URL
	s.mu.Unlock()
	return nil
}

func (s *series) startMCP(ctx context.Context) error {
	cmd := s.command(context.Background(), "mcp", "--tools", "all")
	client := mcp.NewClient(&mcp.Implementation{Name: "killseries", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
		return err
	}
	s.mu.Lock()
	s.mcpCmd, s.mcpSess = cmd, sess
	s.mu.Unlock()
	return nil
}

// stopAll ends serve and mcp gracefully (SIGINT, end of input).
func (s *series) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serve.Process.Signal(os.Interrupt)
	s.serve.Wait()
	s.mcpSess.Close()
}

// rest pauses a writer between writes, longer after a failed one (its
// process is restarting).
func (s *series) rest(ok bool) {
	d := s.pace
	if !ok {
		d = max(d, 50*time.Millisecond)
	}
	time.Sleep(d)
}

// cliWriter writes notes with `cairn note`, one process per note.
func (s *series) cliWriter(ctx context.Context) {
	for ctx.Err() == nil {
		s.pause.RLock()
		c := s.content("cli")
		cmd := s.command(context.Background(), "note", "--agent", "cli-writer", c)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Start()
		if err == nil {
			s.mu.Lock()
			s.clis[cmd] = true
			s.mu.Unlock()
			err = cmd.Wait()
			s.mu.Lock()
			delete(s.clis, cmd)
			s.mu.Unlock()
		}
		var exit *exec.ExitError
		why := ""
		if errors.As(err, &exit) && !exit.Sys().(syscall.WaitStatus).Signaled() {
			why = strings.TrimSpace(stderr.String())
		}
		s.outcome("cli", c, err == nil, why)
		s.pause.RUnlock()
	}
}

func (s *series) post(ctx context.Context, path string, body any) (int, []byte, error) {
	b, _ := json.Marshal(body)
	s.mu.Lock()
	url := s.url
	s.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, "POST", url+path, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// apiWriter writes notes through the cairn API of serve.
func (s *series) apiWriter(ctx context.Context) {
	for ctx.Err() == nil {
		s.pause.RLock()
		c := s.content("api")
		code, body, err := s.post(ctx, "/api/cairn/v1/notes", map[string]any{"agent": "api-writer", "content": c})
		ok := err == nil && (code == 200 || code == 201)
		s.outcome("api", c, ok, refusal(code, body, err))
		s.pause.RUnlock()
		s.rest(ok)
	}
}

// mcpWriter stores messages with store_message through `cairn mcp`.
func (s *series) mcpWriter(ctx context.Context) {
	for ctx.Err() == nil {
		s.pause.RLock()
		c := s.content("mcp")
		s.mu.Lock()
		sess := s.mcpSess
		s.mu.Unlock()
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "store_message",
			Arguments: map[string]any{"channel_id": "kill-series", "sender_id": "mcp-writer", "content": c}})
		ok := err == nil && !res.IsError
		why := ""
		if err == nil && res.IsError {
			why = "tool error"
			if len(res.Content) > 0 {
				if t, isText := res.Content[0].(*mcp.TextContent); isText {
					why = t.Text
				}
			}
		}
		s.outcome("mcp", c, ok, why)
		s.pause.RUnlock()
		s.rest(ok)
	}
}

const chromaPrefix = "/api/v2/tenants/default_tenant/databases/default_database/collections"

func (s *series) createCollection(ctx context.Context) (string, error) {
	code, body, err := s.post(ctx, chromaPrefix, map[string]any{"name": "kill-series", "get_or_create": true})
	if err != nil || code != 200 {
		return "", fmt.Errorf("create collection: %d %s %v", code, body, err)
	}
	var c struct{ ID string }
	if err := json.Unmarshal(body, &c); err != nil || c.ID == "" {
		return "", fmt.Errorf("create collection: %s %v", body, err)
	}
	return c.ID, nil
}

// chromaWriter adds batches of records and deletes some acknowledged ones.
func (s *series) chromaWriter(ctx context.Context, coll string) {
	n := 0
	for ctx.Err() == nil {
		s.pause.RLock()
		var ok bool
		if victims := s.deletable(); s.intn(3) == 0 && len(victims) > 0 {
			ok = s.chromaDelete(ctx, coll, victims)
		} else {
			ok = s.chromaAdd(ctx, coll, &n)
		}
		s.pause.RUnlock()
		s.rest(ok)
	}
}

func (s *series) deletable() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.added {
		if !s.deleted[id] && !s.limbo[id] {
			ids = append(ids, id)
			if len(ids) == 3 {
				break
			}
		}
	}
	return ids
}

func (s *series) chromaAdd(ctx context.Context, coll string, n *int) bool {
	const batch = 8
	ids := make([]string, batch)
	embs := make([][]float32, batch)
	docs := make([]string, batch)
	for i := range ids {
		*n++
		ids[i] = fmt.Sprintf("r%s-%d", s.run, *n)
		docs[i] = "killseries record " + ids[i]
		embs[i] = make([]float32, 16)
		for j := range embs[i] {
			embs[i][j] = float32(s.intn(1000)) / 1000
		}
	}
	code, body, err := s.post(ctx, chromaPrefix+"/"+coll+"/add", map[string]any{"ids": ids, "embeddings": embs, "documents": docs})
	ok := err == nil && code == 201
	s.noteRefusal("chroma add", refusal(code, body, err))
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if ok {
			s.added[id] = true
		} else {
			s.limbo[id] = true
		}
	}
	if !ok {
		s.rep.Unanswered["chroma"]++
	}
	return ok
}

func (s *series) chromaDelete(ctx context.Context, coll string, ids []string) bool {
	code, body, err := s.post(ctx, chromaPrefix+"/"+coll+"/delete", map[string]any{"ids": ids})
	ok := err == nil && code == 200
	s.noteRefusal("chroma delete", refusal(code, body, err))
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if ok {
			s.deleted[id] = true
		} else {
			s.limbo[id] = true
		}
	}
	if ok {
		s.rep.ChromaDelete++
	} else {
		s.rep.Unanswered["chroma"]++
	}
	return ok
}

// check runs `cairn check` and records a failure unless it is clean.
func (s *series) check(ctx context.Context, when string) {
	out, err := s.command(ctx, "check").CombinedOutput()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rep.Checks++
	if err != nil {
		s.rep.Failures = append(s.rep.Failures, fmt.Sprintf("cairn check %s: %v: %s", when, err, bytes.TrimSpace(out)))
	}
}

// verify counts every message content and Chroma record against what the
// writers were told.
func (s *series) verify(ctx context.Context, coll string) error {
	out := filepath.Join(filepath.Dir(s.data), "export")
	os.RemoveAll(out)
	if b, err := s.command(ctx, "export", "--messages", "--format", "jsonl", "--out", out).CombinedOutput(); err != nil {
		return fmt.Errorf("cairn export: %v: %s", err, b)
	}
	stored := map[string]int{}
	err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m struct{ Content string }
			if json.Unmarshal(sc.Bytes(), &m) == nil && strings.HasPrefix(m.Content, "killseries ") {
				stored[m.Content]++
			}
		}
		return sc.Err()
	})
	if err != nil {
		return err
	}
	for c, k := range stored {
		switch {
		case !s.tried[c]:
			s.rep.Failures = append(s.rep.Failures, fmt.Sprintf("a message nobody wrote: %q", c))
		case k > 1:
			s.rep.Duplicated++
		}
	}
	for c := range s.acked {
		if stored[c] == 0 {
			s.rep.Lost++
		}
	}
	s.rep.ChromaAdded, s.rep.ChromaGone = len(s.added), len(s.deleted)
	if err := s.startServe(ctx); err != nil {
		return err
	}
	defer s.stopServe()
	present := map[string]bool{}
	for offset := 0; ; offset += 1000 {
		code, body, err := s.post(ctx, chromaPrefix+"/"+coll+"/get", map[string]any{"include": []string{}, "limit": 1000, "offset": offset})
		if err != nil || code != 200 {
			return fmt.Errorf("chroma get: %d %s %v", code, body, err)
		}
		var got struct{ IDs []string }
		if err := json.Unmarshal(body, &got); err != nil {
			return err
		}
		for _, id := range got.IDs {
			present[id] = true
		}
		if len(got.IDs) < 1000 {
			break
		}
	}
	for id := range s.added {
		switch {
		case s.deleted[id] && present[id]:
			s.rep.Resurrected++
		case !s.deleted[id] && !s.limbo[id] && !present[id]:
			s.rep.Lost++
		}
	}
	for id := range present {
		if !s.added[id] && !s.limbo[id] {
			s.rep.Failures = append(s.rep.Failures, "a Chroma record nobody added: "+id)
		}
	}
	return nil
}

func (s *series) noteRefusal(kind, why string) {
	if why == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rep.Refused[kind]++
	if len(s.rep.RefusedFirst) < 5 {
		s.rep.RefusedFirst = append(s.rep.RefusedFirst, kind+": "+why)
	}
}

func (s *series) stopServe() {
	s.serve.Process.Signal(syscall.SIGINT)
	s.serve.Wait()
}
