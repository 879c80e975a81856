package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// serveRun is one run of the agents against a set of serve processes.
type serveRun struct {
	name  string
	procs []*serveProc
}

// serveProc is one `cairn serve` process of the run.
type serveProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *bytes.Buffer
}

// agentOp is the outcome of one request of a simulated agent.
type agentOp struct {
	kind    string // write, search, read
	latency time.Duration
	err     error
}

// ack is an acknowledged write: the id the server gave to content.
type ack struct {
	id                       int64
	channel, sender, content string
}

func runServe(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	data := fs.String("data", "/work/shared/datasets", "dev sets `DIR` (texts and queries come from cosqa and cranfield)")
	seed := fs.Int("seed", 10000, "messages stored before the agents start")
	procs := fs.Int("procs", 3, "cairn serve processes sharing the PostgreSQL store")
	agents := fs.Int("agents", 50, "concurrent simulated agents")
	ops := fs.Int("ops", 40, "requests per agent")
	bin := fs.String("cairn", "", "cairn `BINARY` (default: go build ./cmd/cairn)")
	model := fs.String("model", "none", "serve's --model: none searches by keyword only; builtin embeds queries and new messages in each process")
	embedded := fs.Bool("embedded", true, "also run the agents against one serve process on the embedded store (a data dir), for comparison")
	fs.Parse(args)
	if *procs < 1 || *agents < 1 || *ops < 1 {
		return fmt.Errorf("--procs, --agents and --ops must be at least 1")
	}
	docs, queries, err := loadWorkload(*data, *seed, 200)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "pgbench-serve-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if *bin == "" {
		if *bin, err = bench.BuildCairnBinary(ctx, tmp); err != nil {
			return err
		}
	}
	dbs, err := newDatabases(ctx, "")
	if err != nil {
		return err
	}
	defer dbs.close()
	var runs []serveRun
	defer func() {
		for _, r := range runs {
			stopServes(r.procs)
		}
	}()
	if *embedded {
		dir := filepath.Join(tmp, "embedded")
		if err := seedAndClose(ctx, docs)(sqlite.OpenEngine(ctx, dir, engine.Options{NoVectorWorker: true}, sqlite.Options{})); err != nil {
			return err
		}
		p, err := startServe(ctx, *bin, dir, "--model", *model)
		if err != nil {
			return err
		}
		runs = append(runs, serveRun{name: "embedded, 1 process", procs: []*serveProc{p}})
	}
	e, dsn, err := dbs.open(ctx, nil, engine.Options{NoVectorWorker: true})
	if err := seedAndClose(ctx, docs)(e, err); err != nil {
		return err
	}
	pg := serveRun{name: fmt.Sprintf("PostgreSQL, %d processes", *procs)}
	for i := range *procs {
		p, err := startServe(ctx, *bin, filepath.Join(tmp, fmt.Sprintf("pg-%d", i)), "--store", dsn, "--model", *model)
		if err != nil {
			stopServes(pg.procs)
			return err
		}
		pg.procs = append(pg.procs, p)
	}
	runs = append(runs, pg)
	fmt.Printf("%d messages stored first, %d agents × %d requests (50%% writes, 40%% hybrid searches, 10%% reads of an acknowledged write), serve --model %s, loopback\n\n",
		len(docs), *agents, *ops, *model)
	fmt.Println("| store | agents | requests/s | writes/s | write p50/p95 ms | search p50/p95 ms | read p50/p95 ms | errors | lost writes | ids given twice |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range runs {
		if err := runAgents(ctx, r, *agents, *ops, queries); err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
	}
	return nil
}

// seedAndClose returns a function that stores docs in the engine it is
// given (unless opening it failed) and closes it.
func seedAndClose(ctx context.Context, docs []loadDoc) func(*engine.Engine, error) error {
	return func(e *engine.Engine, err error) error {
		if err != nil {
			return err
		}
		if _, _, err := fillMessages(ctx, e, docs); err != nil {
			e.Close()
			return err
		}
		return e.Close()
	}
}

// fillMessages stores docs in batches of 500 and returns their ids and
// the time it took.
func fillMessages(ctx context.Context, e *engine.Engine, docs []loadDoc) ([]int64, time.Duration, error) {
	ids := make([]int64, 0, len(docs))
	start := time.Now()
	for i := 0; i < len(docs); i += 500 {
		part := docs[i:min(i+500, len(docs))]
		in := make([]engine.NewMessage, len(part))
		for j, d := range part {
			in[j] = engine.NewMessage{Channel: d.channel, Sender: d.sender, Content: d.content, Type: d.typ}
		}
		rs, err := e.StoreMessages(ctx, in)
		if err != nil {
			return nil, 0, err
		}
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
	}
	return ids, time.Since(start), nil
}

// startServe starts `cairn serve` on a free loopback port with data dir
// dir and reads the URL it prints.
func startServe(ctx context.Context, bin, dir string, extra ...string) (*serveProc, error) {
	args := append([]string{"serve", "--data-dir", dir, "--port", "0", "--json"}, extra...)
	cmd := exec.CommandContext(ctx, bin, args...)
	p := &serveProc{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var info struct{ URL string }
	if err == nil {
		err = json.Unmarshal([]byte(line), &info)
	}
	if err != nil || !strings.HasPrefix(info.URL, "http://127.0.0.1:") {
		stopServes([]*serveProc{p})
		return nil, fmt.Errorf("cairn serve printed no loopback address (%q, %v): %s", line, err, p.stderr.String())
	}
	p.url = info.URL
	return p, nil
}

// stopServes stops the processes (SIGTERM, then SIGKILL after 10 s).
func stopServes(ps []*serveProc) {
	for _, p := range ps {
		if p.cmd.Process == nil || p.cmd.ProcessState != nil {
			continue
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-done
		}
	}
}

// runAgents runs agents concurrent simulated agents of ops requests each
// against r's processes (agent a's request i goes to process (a+i) mod
// the count), then checks every acknowledged write on the first process
// and prints one table row.
func runAgents(ctx context.Context, r serveRun, agents, ops int, queries []string) error {
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: agents}}
	var mu sync.Mutex
	var results []agentOp
	var acks []ack
	var wg sync.WaitGroup
	start := time.Now()
	for a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(a), 7))
			var mine []ack
			for i := range ops {
				p := r.procs[(a+i)%len(r.procs)]
				var op agentOp
				switch k := rng.IntN(10); {
				case k < 5 || len(mine) == 0:
					w := ack{channel: fmt.Sprintf("team-%d", a%5), sender: fmt.Sprintf("agent-%d", a),
						content: fmt.Sprintf("agent %d, finding %d: %s", a, i, queries[rng.IntN(len(queries))])}
					if i%10 == 0 { // the same write from every agent: one message, one id
						w.sender, w.content = "team", fmt.Sprintf("shared finding %d: %s", i, queries[i%len(queries)])
					}
					var id int64
					id, op = postMessage(ctx, client, p.url, w)
					if op.err == nil {
						w.id = id
						mine = append(mine, w)
					}
				case k < 9:
					op = search(ctx, client, p.url, queries[rng.IntN(len(queries))])
				default:
					op = readBack(ctx, client, p.url, mine[rng.IntN(len(mine))])
				}
				mu.Lock()
				results = append(results, op)
				mu.Unlock()
			}
			mu.Lock()
			acks = append(acks, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	// Every acknowledged write: one id per content, no id for two
	// contents, and each readable with its content from another process.
	byContent := map[string]int64{}
	byID := map[int64]string{}
	twice := 0
	for _, w := range acks {
		key := w.channel + "\x00" + w.sender + "\x00" + w.content
		if id, ok := byContent[key]; ok && id != w.id {
			twice++
		}
		byContent[key] = w.id
		if k, ok := byID[w.id]; ok && k != key {
			twice++
		}
		byID[w.id] = key
	}
	lost := 0
	check := r.procs[len(r.procs)-1]
	seen := map[int64]bool{}
	for _, w := range acks {
		if seen[w.id] {
			continue
		}
		seen[w.id] = true
		if op := readBack(ctx, client, check.url, w); op.err != nil {
			lost++
			if lost <= 3 {
				fmt.Fprintf(os.Stderr, "%s: acknowledged write %d not found: %v\n", r.name, w.id, op.err)
			}
		}
	}
	lat := map[string][]time.Duration{}
	errs := 0
	writes := 0
	for _, op := range results {
		if op.err != nil {
			errs++
			if errs <= 3 {
				fmt.Fprintf(os.Stderr, "%s: %s: %v\n", r.name, op.kind, op.err)
			}
			continue
		}
		lat[op.kind] = append(lat[op.kind], op.latency)
		if op.kind == "write" {
			writes++
		}
	}
	pct := func(kind string) string {
		ds := lat[kind]
		if len(ds) == 0 {
			return "-"
		}
		slices.Sort(ds)
		return fmt.Sprintf("%.1f / %.1f", ms(ds[len(ds)/2]), ms(ds[len(ds)*95/100]))
	}
	fmt.Printf("| %s | %d | %.0f | %.0f | %s | %s | %s | %d | %d | %d |\n", r.name, agents, float64(len(results))/elapsed.Seconds(),
		float64(writes)/elapsed.Seconds(), pct("write"), pct("search"), pct("read"), errs, lost, twice)
	return nil
}

func postMessage(ctx context.Context, c *http.Client, url string, w ack) (int64, agentOp) {
	body, _ := json.Marshal(map[string]string{"channel": w.channel, "sender": w.sender, "content": w.content})
	var r struct {
		ID int64 `json:"id"`
	}
	op := call(ctx, c, "write", "POST", url+"/api/cairn/v1/messages", body, &r)
	if op.err == nil && r.ID <= 0 {
		op.err = fmt.Errorf("write acknowledged without an id")
	}
	return r.ID, op
}

func search(ctx context.Context, c *http.Client, url, query string) agentOp {
	body, _ := json.Marshal(map[string]any{"query": query, "limit": 10})
	var r struct {
		Results []json.RawMessage `json:"results"`
	}
	return call(ctx, c, "search", "POST", url+"/api/cairn/v1/search", body, &r)
}

// readBack reads w by id and checks it is w.
func readBack(ctx context.Context, c *http.Client, url string, w ack) agentOp {
	var m struct {
		Content   string `json:"content"`
		ChannelID string `json:"channel_id"`
		SenderID  string `json:"sender_id"`
	}
	op := call(ctx, c, "read", "GET", fmt.Sprintf("%s/api/cairn/v1/messages/%d", url, w.id), nil, &m)
	if op.err == nil && (m.Content != w.content || m.SenderID != w.sender) {
		op.err = fmt.Errorf("message %d is %q from %q, want %q from %q", w.id, m.Content, m.SenderID, w.content, w.sender)
	}
	return op
}

// call makes one request and decodes a 2xx JSON reply into out; any
// other status is an error.
func call(ctx context.Context, c *http.Client, kind, method, url string, body []byte, out any) agentOp {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return agentOp{kind: kind, err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return agentOp{kind: kind, err: err}
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	op := agentOp{kind: kind, latency: time.Since(start)}
	switch {
	case err != nil:
		op.err = err
	case resp.StatusCode/100 != 2:
		op.err = fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, bytes.TrimSpace(b))
	default:
		op.err = json.Unmarshal(b, out)
	}
	return op
}
