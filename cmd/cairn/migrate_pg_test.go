package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/claudecode/ccfixture"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/pgtest"
	"github.com/cairn-dev/cairn/internal/racedetector"
)

// cairn migrate copies a data dir with imported Claude Code sessions, read
// cursors and breadcrumb marks to PostgreSQL and back to a new data dir:
// on all three `cairn sessions`, `cairn unread`, searches with --unread-by
// and --breadcrumbs-valid and `cairn check --breadcrumbs` give the same
// results, and `cairn import
// claude-code` of the same folder finds everything there.
func TestMigrateWholeStoreBothWays(t *testing.T) {
	dsn := pgtest.Database(t)
	src, back := t.TempDir(), t.TempDir()
	env := envMap(map[string]string{"CAIRN_MODEL": "none", "CAIRN_BREADCRUMBS_REPO": gitRepo(t)})
	cli := func(want int, args ...string) string {
		t.Helper()
		out, errOut, code := runCLI(t, env, "", args...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, want, out, errOut)
		}
		return out
	}
	for i := 0; i < 12; i++ {
		meta := `{"breadcrumbs":{"files":["store.go:1"]}}`
		if i%3 == 0 {
			meta = `{"breadcrumbs":{"files":["gone.go"]}}`
		}
		cli(0, "--data-dir", src, "post", "--channel", fmt.Sprintf("team-%d", i%2), "--sender", fmt.Sprintf("agent-%d", i%3), "--meta", meta,
			fmt.Sprintf("finding %d: the cache misses when go.mod changes", i))
	}
	tree, err := ccfixture.Write(t.TempDir(), ccfixture.Options{Rand: rand.New(rand.NewPCG(9, 10)), Projects: 1, SessionsPerProject: 3, Turns: 3})
	if err != nil {
		t.Fatal(err)
	}
	cli(0, "--data-dir", src, "import", "claude-code", tree.Root)
	cli(0, "--data-dir", src, "post", "--channel", "team-0", "--sender", "agent-1", "after the import: the cache is warm")
	cli(0, "--data-dir", src, "unread", "--agent", "agent-2", "--channel", "team-0", "--limit", "3", "--mark")
	cli(0, "--data-dir", src, "unread", "--agent", "agent-0", "--limit", "20", "--mark")
	cli(0, "--data-dir", src, "check", "--breadcrumbs")

	migrate := func(from, to string) map[string]any {
		t.Helper()
		var rep map[string]any
		if err := json.Unmarshal([]byte(cli(0, "migrate", "--json", "--from", from, "--to", to)), &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := migrate(src, dsn)
	target, _ := rep["target_parts"].(map[string]any)
	if rep["sessions_copied"] != float64(3) || target["sessions"] != float64(3) || target["read_cursors"] != float64(2) || target["breadcrumb_marks"] != float64(12) {
		t.Fatalf("migrate to PostgreSQL: %v", rep)
	}
	migrate(dsn, back)
	stores := [][]string{{"--data-dir", src}, {"--store", dsn, "--data-dir", t.TempDir()}, {"--data-dir", back}}
	// Ids are each store's own: compare what the results say, not the ids.
	noIDs := func(out string) string {
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var v any
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("%v: %q", err, l)
			}
			lines = append(lines, fmt.Sprint(dropIDs(v)))
		}
		return strings.Join(lines, "\n")
	}
	for _, args := range [][]string{
		{"sessions", "--json"},
		{"sessions", tree.Sessions[1].ID, "--json"},
		{"unread", "--agent", "agent-2", "--json"},
		{"unread", "--agent", "agent-0", "--json"},
		{"search", "--json", "--mode", "keyword", "--limit", "50", "--unread-by", "agent-0", "cache finding"},
		{"search", "--json", "--mode", "keyword", "--limit", "50", "--unread-by", "agent-2", "--channel", "team-0", "cache finding"},
		{"search", "--json", "--mode", "keyword", "--limit", "50", "--breadcrumbs-valid", "cache finding"},
		{"agents", "--json"},
		{"check", "--breadcrumbs", "--json"},
	} {
		want := noIDs(cli(0, append(stores[0], args...)...))
		if len(want) < 20 {
			t.Fatalf("%v on the source: %q", args, want)
		}
		for _, at := range stores[1:] {
			if got := noIDs(cli(0, append(at, args...)...)); got != want {
				t.Fatalf("%v on %v:\n%s\nwant (source):\n%s", args, at, got, want)
			}
		}
	}
	parts := func(at []string) string {
		var rep struct{ Parts json.RawMessage }
		if err := json.Unmarshal([]byte(cli(0, append(at, "check", "--json")...)), &rep); err != nil {
			t.Fatal(err)
		}
		return string(rep.Parts)
	}
	want := parts(stores[0])
	if !strings.Contains(want, `"sessions":3`) || !strings.Contains(want, `"session_files":3`) || !strings.Contains(want, `"read_cursors":2`) || !strings.Contains(want, `"breadcrumb_marks":12`) {
		t.Fatalf("check on the source: %s", want)
	}
	for _, at := range stores[1:] {
		if got := parts(at); got != want {
			t.Fatalf("check on %v counts %s, the source %s", at, got, want)
		}
		out := cli(0, append(at, "import", "claude-code", tree.Root, "--json")...)
		if !strings.Contains(out, `"added":0,`) || !strings.Contains(out, `"chunks":0`) || !strings.Contains(out, `"files_failed":0`) {
			t.Fatalf("import again on %v: %s", at, out)
		}
	}
}

// dropIDs removes every "id", "message_id", "last_id" and "last_read_id"
// (numbers each store gives its own way) from a decoded JSON value, and
// rounds other numbers to 9 digits (a one-shot keyword search on a data
// dir scores in SQLite's FTS5, whose sums differ in the last bits).
func dropIDs(v any) any {
	switch x := v.(type) {
	case float64:
		return fmt.Sprintf("%.9g", x)
	case map[string]any:
		for _, k := range []string{"id", "message_id", "last_id", "last_read_id"} {
			if _, ok := x[k].(float64); ok {
				delete(x, k)
			}
		}
		for k, e := range x {
			x[k] = dropIDs(e)
		}
	case []any:
		for i, e := range x {
			x[i] = dropIDs(e)
		}
	}
	return v
}

// A real `cairn migrate` killed with SIGKILL while it copies messages, and
// again while it copies sessions, finishes when run again, and nothing is
// stored twice: the target holds exactly the source's messages, sessions,
// cursors and marks.
func TestMigrateKilledResumes(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("builds cairn and copies 6,000 messages: left to the run without -race")
	}
	ctx := context.Background()
	const n = 6000
	src := t.TempDir()
	e, err := sqlite.OpenEngine(ctx, src, engine.Options{NoVectorWorker: true}, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 500 {
		batch := make([]engine.NewMessage, 500)
		for j := range batch {
			batch[j] = engine.NewMessage{Channel: fmt.Sprintf("c-%d", (i+j)%7), Sender: fmt.Sprintf("a-%d", (i+j)%5),
				Content: fmt.Sprintf("message %d: what agent %d found about the outbox", i+j, (i+j)%5)}
		}
		if _, err := e.StoreMessages(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	// Enough sessions (each copied in a transaction of its own) to stop
	// the copy among them.
	tree, err := ccfixture.Write(t.TempDir(), ccfixture.Options{Rand: rand.New(rand.NewPCG(11, 12)), Projects: 4, SessionsPerProject: 60, Turns: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: tree.Root}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.MarkRead(ctx, engine.MarkReadRequest{Agent: "a-1", UpTo: 4000}); err != nil {
		t.Fatal(err)
	}
	want, err := ops.Consistency(ctx, e)
	if err != nil || want.Parts == nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	bin := buildCairn(t)
	dsn := pgtest.Database(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	count := func() int64 {
		var c int64
		// Before the first migrate creates the schema there is no table.
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM messages").Scan(&c); err != nil {
			return -1
		}
		return c
	}
	sessions := func() int64 {
		var c int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM sessions").Scan(&c); err != nil {
			return -1
		}
		return c
	}
	// killWhen starts a migrate and SIGKILLs it once ready says so, and
	// checks that it was still copying then.
	killWhen := func(what string, ready func() bool) {
		t.Helper()
		cmd := exec.Command(bin, "migrate", "--from", src, "--to", dsn)
		cmd.Env = append(os.Environ(), "CAIRN_MODEL=none", "CAIRN_DATA_DIR="+t.TempDir())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Minute) // generous: the machine may be loaded
		for !ready() {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("%s: not reached in 10 minutes", what)
			}
			time.Sleep(2 * time.Millisecond)
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("%s: migrate ended before the kill: %v", what, err)
		}
		m, s := count(), sessions()
		if m >= int64(n)+want.Parts.Chunks && s == want.Parts.Sessions {
			t.Fatalf("%s: the copy was complete when killed (%d messages, %d sessions)", what, m, s)
		}
		t.Logf("%s: killed with %d messages and %d of %d sessions copied", what, m, s, want.Parts.Sessions)
	}
	killWhen("copying messages", func() bool { return count() >= 1000 })
	killedAt := count()
	killWhen("copying sessions", func() bool { return sessions() >= 1 })
	if s := sessions(); s >= want.Parts.Sessions {
		t.Fatalf("every session was copied when killed (%d)", s)
	}
	out, err := exec.Command(bin, "--data-dir", t.TempDir(), "migrate", "--json", "--from", src, "--to", dsn).CombinedOutput()
	if err != nil {
		t.Fatalf("migrate again: %v\n%s", err, out)
	}
	var rep ingest.TransferReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep.Present < killedAt || rep.Copied+rep.Present != rep.Source || rep.Target != rep.Source {
		t.Fatalf("migrate again: %s (killed at %d messages)", out, killedAt)
	}
	if got := rep.TargetParts; !reflect.DeepEqual(got, *want.Parts) {
		t.Fatalf("parts after resuming %+v, want %+v", got, *want.Parts)
	}
	if out, err := exec.Command(bin, "--store", dsn, "--data-dir", t.TempDir(), "check").CombinedOutput(); err != nil {
		t.Fatalf("check: %v\n%s", err, out)
	}
}
