package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/pgtest"
	"github.com/cairn-dev/cairn/internal/racedetector"
)

// --store, CAIRN_STORE and config.toml's store put the messages in
// PostgreSQL; a bad URL is a usage error (exit 2), an unreachable server
// an error naming it (exit 1), and an operation that needs a data dir
// says so (exit 2).
func TestStoreFlagPostgres(t *testing.T) {
	dsn := pgtest.Database(t)
	data := t.TempDir()
	env := envMap(map[string]string{"CAIRN_DATA_DIR": data, "CAIRN_MODEL": "none"})
	out, errOut, code := runCLI(t, env, "", "--store", dsn, "post", "--channel", "general", "--sender", "alice", "--json", "the build cache is invalidated when go.mod changes")
	if code != 0 || !strings.Contains(out, `"id":1`) {
		t.Fatalf("post: exit %d %s %s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(data, "cairn.db")); err == nil {
		t.Fatal("post with --store wrote a SQLite database in the data dir")
	}
	// The environment and config.toml name the same store.
	envStore := envMap(map[string]string{"CAIRN_DATA_DIR": data, "CAIRN_MODEL": "none", "CAIRN_STORE": dsn})
	out, errOut, code = runCLI(t, envStore, "", "search", "--json", "build cache")
	if code != 0 || !strings.Contains(out, `"id":1`) {
		t.Fatalf("search with CAIRN_STORE: exit %d %s %s", code, out, errOut)
	}
	if err := os.WriteFile(filepath.Join(data, "config.toml"), []byte(fmt.Sprintf("store = %q\n", dsn)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runCLI(t, env, "", "show", "--json", "1")
	if code != 0 || !strings.Contains(out, "go.mod") {
		t.Fatalf("show with config.toml store: exit %d %s %s", code, out, errOut)
	}
	_, errOut, code = runCLI(t, env, "", "backup", filepath.Join(t.TempDir(), "b.tar"))
	if code != 2 || !strings.Contains(errOut, "pg_dump") {
		t.Fatalf("backup on PostgreSQL: exit %d %s", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(data, "config.toml"), []byte("store = \"mysql://db\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code = runCLI(t, env, "", "show", "1"); code != 2 || !strings.Contains(errOut, "store") {
		t.Fatalf("config store mysql://: exit %d %s", code, errOut)
	}
	if err := os.Remove(filepath.Join(data, "config.toml")); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code = runCLI(t, env, "", "--store", "mysql://db", "show", "1"); code != 2 || !strings.Contains(errOut, "--store") {
		t.Fatalf("--store mysql://: exit %d %s", code, errOut)
	}
	_, errOut, code = runCLI(t, env, "", "--store", "postgres://u:hunter2@127.0.0.1:1/db?connect_timeout=2", "show", "1")
	if code != 1 || !strings.Contains(errOut, "127.0.0.1:1") || strings.Contains(errOut, "hunter2") {
		t.Fatalf("unreachable server: exit %d %s", code, errOut)
	}
}

// Three real `cairn serve` processes share one database while 30 agents
// write through them at random, half of the writes repeating another
// agent's (idempotent across processes), and one process is killed
// (SIGKILL) half way: every acknowledged write is there with one id, no id
// is given twice, and the counters add up.
func TestServeProcessesShareOneDatabase(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("builds cairn and runs three servers: left to the run without -race")
	}
	bin := buildCairn(t)
	dsn := pgtest.Database(t)
	procs := make([]*serveProc, 3)
	for i := range procs {
		procs[i] = startServe(t, bin, t.TempDir(), "--store", dsn, "--model", "none")
	}
	const agents, writes = 30, 20
	var mu sync.Mutex
	acked := map[string]map[int64]bool{} // content -> ids
	var killOnce sync.Once
	var wg sync.WaitGroup
	failed := 0
	for a := 0; a < agents; a++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := 0; w < writes; w++ {
				if a == 0 && w == writes/2 {
					killOnce.Do(func() { _ = procs[2].cmd.Process.Signal(syscall.SIGKILL) })
				}
				content := fmt.Sprintf("agent %d finding %d", a, w)
				sender := fmt.Sprintf("agent-%d", a)
				if w%2 == 0 {
					content, sender = fmt.Sprintf("shared finding %d", w), "team"
				}
				p := procs[rand.IntN(len(procs))]
				body := fmt.Sprintf(`{"channel":"team-%d","sender":%q,"content":%q}`, w%3, sender, content)
				req, _ := http.NewRequest("POST", p.url+"/api/cairn/v1/messages", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					mu.Lock()
					failed++ // the killed process: not acknowledged
					mu.Unlock()
					continue
				}
				var r struct{ ID int64 }
				err = json.NewDecoder(resp.Body).Decode(&r)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK || err != nil || r.ID == 0 {
					t.Errorf("POST to %s: %d %v", p.url, resp.StatusCode, err)
					continue
				}
				mu.Lock()
				if acked[content] == nil {
					acked[content] = map[int64]bool{}
				}
				acked[content][r.ID] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if failed == 0 {
		t.Log("no request reached the killed process")
	}
	owner := map[int64]string{}
	for content, ids := range acked {
		if len(ids) != 1 {
			t.Fatalf("%q got ids %v", content, ids)
		}
		for id := range ids {
			if other, dup := owner[id]; dup {
				t.Fatalf("id %d given to %q and %q", id, other, content)
			}
			owner[id] = content
		}
	}
	live := procs[0]
	for id, content := range owner {
		code, body := httpDo(t, "GET", fmt.Sprintf("%s/api/cairn/v1/messages/%d", live.url, id), "", "")
		if code != 200 || !strings.Contains(body, content) {
			t.Fatalf("acknowledged message %d (%q): %d %s", id, content, code, body)
		}
	}
	code, body := httpDo(t, "GET", live.url+"/api/cairn/v1/channels", "", "")
	if code != 200 {
		t.Fatalf("channels: %d %s", code, body)
	}
	var chans struct {
		Results []struct {
			MessageCount int64 `json:"message_count"`
		}
	}
	if err := json.Unmarshal([]byte(body), &chans); err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, c := range chans.Results {
		total += c.MessageCount
	}
	// Writes the killed process committed but could not acknowledge are
	// there too; never fewer than acknowledged, never more than attempted.
	if attempted := int64(writes/2 + agents*writes/2); total < int64(len(owner)) || total > attempted {
		t.Fatalf("channels count %d messages; %d acknowledged, %d distinct attempted", total, len(owner), attempted)
	}
}

// cairn migrate copies a data dir to PostgreSQL and back: every message
// with its fields, resumable (a second run copies only what is new), and
// the copy back passes cairn check.
func TestMigrateDataDirPostgresAndBack(t *testing.T) {
	dsn := pgtest.Database(t)
	src, back := t.TempDir(), t.TempDir()
	env := envMap(map[string]string{"CAIRN_MODEL": "none"})
	post := func(dir string, args ...string) {
		t.Helper()
		if _, errOut, code := runCLI(t, env, "", append([]string{"--data-dir", dir, "post", "--json"}, args...)...); code != 0 {
			t.Fatalf("post %v: exit %d %s", args, code, errOut)
		}
	}
	for i := 0; i < 30; i++ {
		post(src, "--channel", fmt.Sprintf("team-%d", i%3), "--sender", fmt.Sprintf("agent-%d", i%4), "--confidence", "0.8", "--type", "decision",
			"--file", "engine/hybrid.go:1-9", fmt.Sprintf("finding %d: the cache misses when go.mod changes", i))
	}
	if _, errOut, code := runCLI(t, env, "", "--data-dir", src, "delete", "--yes", "7"); code != 0 {
		t.Fatalf("delete: exit %d %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, env, "", "--data-dir", src, "channels", "create", "team-0", "--description", "what team 0 found"); code != 2 || !strings.Contains(errOut, "exists") {
		t.Fatalf("create of a used channel: exit %d %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, env, "", "--data-dir", src, "channels", "create", "plans", "--name", "Plans", "--description", "what comes next"); code != 0 {
		t.Fatalf("channels create: exit %d %s", code, errOut)
	}
	migrate := func(from, to string) map[string]int64 {
		t.Helper()
		out, errOut, code := runCLI(t, env, "", "migrate", "--json", "--from", from, "--to", to)
		if code != 0 {
			t.Fatalf("migrate %s -> %s: exit %d %s", from, to, code, errOut)
		}
		var raw map[string]any
		if err := json.Unmarshal([]byte(out), &raw); err != nil {
			t.Fatalf("migrate output %q: %v", out, err)
		}
		rep := map[string]int64{}
		for k, v := range raw {
			if n, ok := v.(float64); ok {
				rep[k] = int64(n)
			}
		}
		return rep
	}
	if rep := migrate(src, dsn); rep["copied"] != 29 || rep["present"] != 0 || rep["target_messages"] != 29 || rep["channels_created"] != 1 {
		t.Fatalf("first copy: %v", rep)
	}
	for _, at := range [][]string{{"--data-dir", src}, {"--store", dsn, "--data-dir", t.TempDir()}} {
		out, errOut, code := runCLI(t, env, "", append(at, "channels", "--json")...)
		if code != 0 || !strings.Contains(out, `"id":"plans","channel_type":"channel","name":"Plans","description":"what comes next"`) {
			t.Fatalf("channels %v: exit %d %s %s", at, code, out, errOut)
		}
	}
	if out, errOut, code := runCLI(t, env, "", "--store", dsn, "--data-dir", t.TempDir(), "check"); code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("check on PostgreSQL: exit %d %s %s", code, out, errOut)
	}
	post(src, "--channel", "team-0", "--sender", "agent-9", "one more finding after the copy")
	if rep := migrate(src, dsn); rep["copied"] != 1 || rep["present"] != 29 || rep["target_messages"] != 30 {
		t.Fatalf("second copy (resume): %v", rep)
	}
	if rep := migrate(dsn, back); rep["copied"] != 30 || rep["target_messages"] != 30 {
		t.Fatalf("copy back: %v", rep)
	}
	if _, errOut, code := runCLI(t, env, "", "--data-dir", back, "check"); code != 0 {
		t.Fatalf("check of the copy back: exit %d %s", code, errOut)
	}
	// The same messages on all three, by content: search each the same way.
	results := func(args ...string) string {
		t.Helper()
		out, errOut, code := runCLI(t, env, "", append(args, "search", "--json", "--mode", "keyword", "--limit", "100", "cache go.mod finding")...)
		if code != 0 {
			t.Fatalf("search %v: exit %d %s", args, code, errOut)
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var r map[string]any
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			delete(r, "id")
			lines = append(lines, fmt.Sprint(r["content"], r["channel_id"], r["sender_id"], r["confidence"], r["message_type"], r["metadata"], r["created_at"], r["score"]))
		}
		return strings.Join(lines, "\n")
	}
	a, b, c := results("--data-dir", src), results("--store", dsn, "--data-dir", t.TempDir()), results("--data-dir", back)
	if strings.Count(a, "finding") != 30 {
		t.Fatalf("source search found %d messages, want 30:\n%s", strings.Count(a, "finding"), a)
	}
	if a != b || a != c {
		t.Fatalf("searches differ:\nsource:\n%s\npostgres:\n%s\nback:\n%s", a, b, c)
	}
}
