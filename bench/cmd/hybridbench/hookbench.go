package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runHookBench times whole `cairn hook claude-code` processes as Claude
// Code runs them (the hook's JSON on stdin, the session's working
// directory) on a store written by oneshot-store: UserPromptSubmit with
// a fresh session each (the recall searches the project "cairn", a third
// of the store) and SessionStart, interleaved with one-shot `cairn
// search` processes of the same prompts in the same project (the
// reference a loaded machine's figures are read against). It prints wall
// p50/p95, CPU p50 and the mean output, with the load average before and
// after.
func runHookBench(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("hook", flag.ExitOnError)
	bin := fs.String("bin", "bin/cairn", "cairn `binary` to time")
	store := fs.String("store", "", "data `DIR` written by oneshot-store")
	runs := fs.Int("runs", 40, "processes per event")
	fs.Parse(args)
	if *store == "" {
		return fmt.Errorf("hook: -store is required")
	}
	cwd := filepath.Join(os.TempDir(), "hookbench", "cairn") // the project is the directory's name
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		return err
	}
	prompts := []string{"why did the deploy fail again", "sulo kamine tari", "wal mode busy timeout settings", "how do we rotate the keys"}
	type result struct {
		wall, cpu lat
		out       int
	}
	const search = "cairn search (reference)"
	run := func(event string, i int) (time.Duration, time.Duration, int, error) {
		in, _ := json.Marshal(map[string]any{"session_id": fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i), "cwd": cwd,
			"hook_event_name": event, "source": "startup", "prompt": prompts[i%len(prompts)], "transcript_path": filepath.Join(cwd, "t.jsonl")})
		cmd := exec.CommandContext(ctx, *bin, "hook", "claude-code", "--data-dir", *store)
		if event == search {
			cmd = exec.CommandContext(ctx, *bin, "search", "--data-dir", *store, "--project", "cairn", "--limit", "30", prompts[i%len(prompts)])
		}
		cmd.Dir, cmd.Stdin = cwd, bytes.NewReader(in)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		t0 := time.Now()
		out, err := cmd.Output()
		wall := time.Since(t0)
		// A hook writes nothing on stderr; a search may (the relevance
		// floor's hint).
		if err != nil || (event != search && stderr.Len() > 0) {
			return 0, 0, 0, fmt.Errorf("%s hook: %v: %s", *bin, err, stderr.String())
		}
		return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), len(out), nil
	}
	before, _ := os.ReadFile("/proc/loadavg")
	res := map[string]*result{}
	events := []string{"UserPromptSubmit", "SessionStart", search}
	for _, ev := range events {
		res[ev] = &result{}
		if _, _, _, err := run(ev, 0); err != nil { // warm the page cache
			return err
		}
	}
	for i := range *runs {
		for _, ev := range events {
			wall, cpu, n, err := run(ev, i)
			if err != nil {
				return err
			}
			r := res[ev]
			r.wall, r.cpu, r.out = append(r.wall, wall), append(r.cpu, cpu), r.out+n
		}
	}
	after, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("# cairn hook claude-code, whole processes, %d per event, store %s\n# load average before: %s# load average after:  %s", *runs, *store, before, after)
	fmt.Println("| event | wall p50 | wall p95 | CPU p50 | mean stdout |\n|---|---:|---:|---:|---:|")
	for _, ev := range events {
		r := res[ev]
		fmt.Printf("| %s | %s | %s | %s | %d B |\n", ev, ms(r.wall.pct(.5)), ms(r.wall.pct(.95)), ms(r.cpu.pct(.5)), r.out/max(*runs, 1))
	}
	return nil
}

// runToolsList measures what `cairn mcp` lists to a client (the official
// Go SDK's, over stdio) for each tool set: the tools/list result's JSON
// bytes, and tokens estimated as bytes / 4.
func runToolsList(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("toolslist", flag.ExitOnError)
	bin := fs.String("bin", "bin/cairn", "cairn `binary`")
	sets := fs.String("sets", "core;all", "semicolon-separated --tools values to measure (each may list sets: core,memory)")
	fs.Parse(args)
	dir, err := os.MkdirTemp("", "toolslist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Println("| tool set | tools | tools/list bytes | estimated tokens (bytes / 4) |\n|---|---:|---:|---:|")
	for _, set := range strings.Split(*sets, ";") {
		cmd := exec.CommandContext(ctx, *bin, "mcp", "--data-dir", dir, "--tools", set)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "toolslist", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			return err
		}
		res, err := cs.ListTools(ctx, nil)
		cs.Close()
		if err != nil {
			return err
		}
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		fmt.Printf("| %s | %d | %d | %d |\n", set, len(res.Tools), len(b), len(b)/4)
	}
	return nil
}
