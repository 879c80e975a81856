package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/claudecode/ccfixture"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/postgres"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/pgtest"
)

// both runs op on the embedded store and on PostgreSQL and fails unless
// the results (as JSON) and the errors are the same.
func both[T any](t *testing.T, what string, a, b *engine.Engine, op func(*engine.Engine) (T, error)) T {
	t.Helper()
	ra, errA := op(a)
	rb, errB := op(b)
	if (errA == nil) != (errB == nil) || errA != nil && errA.Error() != errB.Error() {
		t.Fatalf("%s: errors differ:\nsqlite   %v\npostgres %v", what, errA, errB)
	}
	if ja, jb := jsonOf(t, ra), jsonOf(t, rb); ja != jb {
		t.Fatalf("%s differs:\nsqlite   %s\npostgres %s", what, ja, jb)
	}
	return ra
}

const importJSONL = `{"kind": "channel", "id": "design", "name": "Design", "description": "how cairn is built", "project": "cairn"}
{"channel": "design", "sender": "alice", "project": "cairn", "content": "the storage boundary keeps one orchestration", "created_at": "2026-10-03T10:00:00Z"}
{"channel": "design", "sender": "bob", "content": "operations are optional capabilities", "type": "decision", "created_at": "2026-10-03T11:00:00Z"}
{"channel": "imported", "sender": "bob", "content": "a channel created by the import", "created_at": "2026-10-03T12:00:00Z"}
{"channel": "general", "sender": "alice", "content": "the build cache is invalidated when the go.mod file changes (note 0)"}
`

// Channels with descriptions, imports, listings by scope, stats, the
// consistency check, exports, unread cursors and breadcrumb marks give the
// same results on both stores.
func TestDifferentialOperations(t *testing.T) {
	ctx := context.Background()
	a, b := openPair(t, wordsEmbedder(32))
	for _, in := range []engine.NewChannel{
		{ID: "planning", Name: "Planning", Description: "what comes next", Project: "cairn"},
		{ID: "planning"},
		{ID: "project:cairn:x"},
		{ID: "quiet", Description: "no messages yet"},
	} {
		both(t, "create channel "+in.ID, a, b, func(e *engine.Engine) (engine.Channel, error) { return e.CreateChannel(ctx, in) })
	}
	both(t, "get channel", a, b, func(e *engine.Engine) (engine.Channel, error) { return e.GetChannel(ctx, "planning") })
	both(t, "get missing channel", a, b, func(e *engine.Engine) (engine.Channel, error) { return e.GetChannel(ctx, "nope") })
	if idsA, idsB := workload(t, a), workload(t, b); jsonOf(t, idsA) != jsonOf(t, idsB) {
		t.Fatalf("ids differ: %v, %v", idsA, idsB)
	}
	both(t, "import messages", a, b, func(e *engine.Engine) (*ingest.ImportMessagesReport, error) {
		return ingest.ImportMessages(ctx, e, strings.NewReader(importJSONL), ingest.ImportMessagesOptions{BatchSize: 2})
	})
	both(t, "import again", a, b, func(e *engine.Engine) (*ingest.ImportMessagesReport, error) {
		return ingest.ImportMessages(ctx, e, strings.NewReader(importJSONL), ingest.ImportMessagesOptions{})
	})
	both(t, "import of a missing channel", a, b, func(e *engine.Engine) (*ingest.ImportMessagesReport, error) {
		return ingest.ImportMessages(ctx, e, strings.NewReader(`{"channel": "absent", "sender": "x", "content": "y"}`), ingest.ImportMessagesOptions{NoCreateChannels: true})
	})
	for _, sc := range []engine.Scope{{}, {Kind: engine.ScopeNotes}, {Kind: engine.ScopeNotes, Project: "cairn"},
		{Kind: engine.ScopeProject}, {Kind: engine.ScopeProject, Project: "cairn"}, {Project: "cairn"}, {Kind: engine.ScopeNotes, Agent: "alice"}} {
		both(t, "channels "+jsonOf(t, sc), a, b, func(e *engine.Engine) ([]engine.Channel, error) { return e.ListChannels(ctx, sc) })
	}

	for _, e := range []*engine.Engine{a, b} {
		if err := ops.SyncVectors(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	sa, err := ops.StoreStats(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := ops.StoreStats(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		a, b any
	}{{"messages", sa.Messages, sb.Messages}, {"by channel", sa.ByChannel, sb.ByChannel}, {"by type", sa.ByType, sb.ByType},
		{"by agent", sa.ByAgent, sb.ByAgent}, {"vectors", sa.Vectors.Queued, sb.Vectors.Queued}} {
		if ja, jb := jsonOf(t, c.a), jsonOf(t, c.b); ja != jb {
			t.Errorf("stats %s: sqlite %s, postgres %s", c.name, ja, jb)
		}
	}
	if tl := both(t, "timeline", a, b, func(e *engine.Engine) (engine.Timeline, error) {
		return e.Timeline(ctx, engine.TimelineRequest{Bucket: 24 * time.Hour, Buckets: 60})
	}); len(tl.Series) != 3 {
		t.Errorf("timeline %+v: want 3 channel types", tl)
	}
	if sb.Bytes.Total <= 0 || sb.Bytes.Messages <= 0 || sb.Bytes.FTS <= 0 || sb.Bytes.Vectors <= 0 {
		t.Errorf("postgres bytes %+v: want every part > 0", sb.Bytes)
	}

	ra, err := ops.Consistency(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := ops.Consistency(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if !ra.OK() || !rb.OK() || ra.Messages != rb.Messages || rb.FTSRows != rb.Messages || len(rb.Sets) != 1 ||
		rb.Sets[0].Vectors != ra.Sets[0].Vectors || rb.Sets[0].CollectionDim != 32 {
		t.Fatalf("consistency:\nsqlite   %s\npostgres %s", jsonOf(t, ra), jsonOf(t, rb))
	}
	for _, e := range []*engine.Engine{a, b} {
		if err := ops.Check(ctx, e); err != nil {
			t.Fatal(err)
		}
	}

	dirA, dirB := t.TempDir(), t.TempDir()
	both(t, "export all", a, b, func(e *engine.Engine) (int, error) {
		dir := map[*engine.Engine]string{a: dirA, b: dirB}[e]
		fs, err := ingest.ExportMessages(ctx, e, ingest.MessageExportOptions{OutDir: dir})
		return len(fs), err
	})
	names, _ := filepath.Glob(filepath.Join(dirA, ingest.MessagesDir, "*"))
	if len(names) < 10 {
		t.Fatalf("exported %v", names)
	}
	for _, n := range names {
		fa, _ := os.ReadFile(n)
		fb, err := os.ReadFile(filepath.Join(dirB, ingest.MessagesDir, filepath.Base(n)))
		if err != nil || string(fa) != string(fb) {
			t.Fatalf("export %s differs (%v):\nsqlite\n%s\npostgres\n%s", filepath.Base(n), err, fa, fb)
		}
	}

	for i, op := range []func(*engine.Engine) (any, error){
		func(e *engine.Engine) (any, error) {
			return e.Unread(ctx, engine.UnreadRequest{Agent: "bob", Limit: 5})
		},
		func(e *engine.Engine) (any, error) {
			return e.MarkRead(ctx, engine.MarkReadRequest{Agent: "bob", UpTo: 5})
		},
		func(e *engine.Engine) (any, error) {
			return e.MarkRead(ctx, engine.MarkReadRequest{Agent: "bob", UpTo: 3})
		},
		func(e *engine.Engine) (any, error) {
			return e.Unread(ctx, engine.UnreadRequest{Agent: "bob", Limit: 3})
		},
		func(e *engine.Engine) (any, error) {
			return e.MarkRead(ctx, engine.MarkReadRequest{Agent: "bob", Channel: "general", UpTo: 40})
		},
		func(e *engine.Engine) (any, error) {
			return e.Unread(ctx, engine.UnreadRequest{Agent: "bob", Channel: "general"})
		},
		func(e *engine.Engine) (any, error) {
			return e.MarkRead(ctx, engine.MarkReadRequest{Agent: "carol", Project: "cairn"})
		},
		func(e *engine.Engine) (any, error) {
			return e.Unread(ctx, engine.UnreadRequest{Agent: "carol", Project: "cairn"})
		},
		func(e *engine.Engine) (any, error) { return e.Unread(ctx, engine.UnreadRequest{Agent: "carol"}) },
		func(e *engine.Engine) (any, error) {
			return e.MarkRead(ctx, engine.MarkReadRequest{Agent: "bob", UpTo: 9999})
		},
		func(e *engine.Engine) (any, error) {
			return e.Unread(ctx, engine.UnreadRequest{Agent: "bob", Channel: "nope"})
		},
		func(e *engine.Engine) (any, error) {
			return e.MarkRead(ctx, engine.MarkReadRequest{Agent: "bob", Channel: "nope"})
		},
	} {
		both(t, "cursor step "+string(rune('a'+i)), a, b, op)
	}

	const head = "0123456789abcdef0123456789abcdef01234567"
	toMark := both(t, "messages to mark", a, b, func(e *engine.Engine) ([]engine.Message, error) {
		return ops.MessagesToMark(ctx, e, testRepo, head, 0, 0)
	})
	if len(toMark) == 0 {
		t.Fatal("no message with breadcrumbs")
	}
	marks := map[int64][]engine.BreadcrumbMark{toMark[0].ID: {{Kind: "file", Ref: "engine/hybrid.go:10-20", State: engine.MarkValid}}, 99999: nil}
	both(t, "put marks", a, b, func(e *engine.Engine) (int, error) { return 0, ops.PutBreadcrumbMarks(ctx, e, testRepo, head, marks) })
	both(t, "messages to mark after", a, b, func(e *engine.Engine) ([]engine.Message, error) {
		return ops.MessagesToMark(ctx, e, testRepo, head, 0, 0)
	})
	both(t, "bad mark", a, b, func(e *engine.Engine) (int, error) {
		return 0, ops.PutBreadcrumbMarks(ctx, e, testRepo, head, map[int64][]engine.BreadcrumbMark{1: {{State: "odd"}}})
	})

	// Per repository: a note of another repository is not offered here;
	// one that recorded none (an import) is offered everywhere, once per
	// HEAD, until a repository adopts it.
	const other, head2 = "/src/other", "89abcdef0123456789abcdef0123456789abcdef"
	both(t, "messages to mark elsewhere", a, b, func(e *engine.Engine) ([]engine.Message, error) { return ops.MessagesToMark(ctx, e, other, head, 0, 0) })
	legacy := both(t, "legacy note", a, b, func(e *engine.Engine) ([]engine.WriteResult, error) {
		return e.StoreMessages(ctx, []engine.NewMessage{{Channel: "general", Sender: "bob", Content: "imported note with a file", Breadcrumbs: engine.Breadcrumbs{Files: []string{"x.go"}}}})
	})[0].ID
	both(t, "legacy offered", a, b, func(e *engine.Engine) ([]engine.Message, error) { return ops.MessagesToMark(ctx, e, other, head, 0, 0) })
	both(t, "legacy not here", a, b, func(e *engine.Engine) (int, error) {
		return 0, ops.PutBreadcrumbMarks(ctx, e, "", head, map[int64][]engine.BreadcrumbMark{legacy: nil})
	})
	both(t, "legacy not offered again", a, b, func(e *engine.Engine) ([]engine.Message, error) { return ops.MessagesToMark(ctx, e, other, head, 0, 0) })
	both(t, "legacy offered at another HEAD", a, b, func(e *engine.Engine) ([]engine.Message, error) {
		return ops.MessagesToMark(ctx, e, other, head2, 0, 0)
	})
	both(t, "legacy adopted", a, b, func(e *engine.Engine) (int, error) {
		return 0, ops.PutBreadcrumbMarks(ctx, e, other, head2, map[int64][]engine.BreadcrumbMark{legacy: {{Kind: "files", Ref: "x.go", State: engine.MarkValid}}})
	})
	both(t, "adopted marks", a, b, func(e *engine.Engine) (map[int64]engine.MarkRow, error) {
		return ops.CachedMarks(ctx, e, []int64{legacy, toMark[0].ID})
	})
	both(t, "adopted note read", a, b, func(e *engine.Engine) (engine.Message, error) { return e.GetMessage(ctx, legacy) })

	// A channel's neighbours and the scan of messages with breadcrumbs:
	// the same messages in the same order, paged alike, and the same
	// refusals of a missing id and of a bad count.
	for id := int64(1); id <= legacy+1; id++ {
		for _, n := range [][2]int{{1, 1}, {3, 0}, {0, 5}, {engine.MaxNeighbours, engine.MaxNeighbours}} {
			both(t, fmt.Sprintf("neighbours of %d %v", id, n), a, b, func(e *engine.Engine) (engine.Neighbours, error) { return e.Neighbours(ctx, id, n[0], n[1]) })
		}
	}
	both(t, "too many neighbours", a, b, func(e *engine.Engine) (engine.Neighbours, error) {
		return e.Neighbours(ctx, 1, engine.MaxNeighbours+1, 0)
	})
	for _, page := range []int{1, 3, 1000} {
		both(t, fmt.Sprintf("messages with breadcrumbs by %d", page), a, b, func(e *engine.Engine) ([]engine.Message, error) {
			var all []engine.Message
			for after := int64(0); ; {
				ms, err := ops.MessagesWithBreadcrumbs(ctx, e, after, page)
				if err != nil || len(ms) == 0 {
					return all, err
				}
				all, after = append(all, ms...), ms[len(ms)-1].ID
			}
		})
	}

	// Supersedes: the same links, refusals, reads, searches and deletes.
	orig := both(t, "original", a, b, func(e *engine.Engine) (engine.WriteResult, error) {
		return e.StoreMessage(ctx, engine.NewMessage{Channel: "general", Sender: "bob", Content: "the release branch is cut on Mondays"})
	}).ID
	fix := both(t, "correction", a, b, func(e *engine.Engine) (engine.WriteResult, error) {
		return e.StoreMessage(ctx, engine.NewMessage{Channel: "general", Sender: "bob", Content: "the release branch is cut on Thursdays", Supersedes: orig})
	}).ID
	both(t, "repeat of the correction", a, b, func(e *engine.Engine) (engine.WriteResult, error) {
		return e.StoreMessage(ctx, engine.NewMessage{Channel: "general", Sender: "bob", Content: "the release branch is cut on Thursdays", Supersedes: orig})
	})
	for _, bad := range []int64{orig, 987654} {
		both(t, "bad supersedes", a, b, func(e *engine.Engine) (engine.WriteResult, error) {
			return e.StoreMessage(ctx, engine.NewMessage{Channel: "general", Sender: "bob", Content: "another take on releases", Supersedes: bad})
		})
		both(t, "bad supersedes in a batch", a, b, func(e *engine.Engine) ([]engine.WriteResult, error) {
			return e.StoreMessages(ctx, []engine.NewMessage{{Channel: "general", Sender: "bob", Content: "a batch take on releases", Supersedes: bad}})
		})
	}
	both(t, "superseded read", a, b, func(e *engine.Engine) (engine.Message, error) { return e.GetMessage(ctx, orig) })
	both(t, "correction read", a, b, func(e *engine.Engine) (engine.Message, error) { return e.GetMessage(ctx, fix) })
	for _, include := range []bool{false, true} {
		for _, q := range []string{"release branch cut", ""} {
			both(t, "search superseded", a, b, func(e *engine.Engine) ([]int64, error) {
				rs, err := e.Search(ctx, engine.SearchRequest{Query: q, Mode: engine.ModeKeyword, Limit: 50, Filter: engine.Filter{ChannelIDs: []string{"general"}, IncludeSuperseded: include}})
				out := make([]int64, len(rs))
				for i, r := range rs {
					out[i] = r.Message.ID
				}
				slices.Sort(out)
				return out, err
			})
		}
	}
	both(t, "delete the correction", a, b, func(e *engine.Engine) (int, error) { return 0, e.DeleteMessage(ctx, fix) })
	both(t, "original current again", a, b, func(e *engine.Engine) (engine.Message, error) { return e.GetMessage(ctx, orig) })
}

// A backup of a PostgreSQL store is refused as bad input naming the store
// and PostgreSQL's own tools; an empty store lists no session and has
// none to purge.
func TestOperationsRefusedOnPostgres(t *testing.T) {
	ctx := context.Background()
	_, b := openPair(t, nil)
	var inv *engine.InvalidError
	_, err := ops.Backup(ctx, b, filepath.Join(t.TempDir(), "x.tar"), engine.BackupOptions{})
	if !errors.As(err, &inv) || inv.Field != "store" || !strings.Contains(err.Error(), "pg_dump") {
		t.Errorf("backup: %v", err)
	}
	if ss, err := ingest.ListSessions(ctx, b); err != nil || len(ss) != 0 {
		t.Errorf("sessions of an empty store: %v %v", ss, err)
	}
	if _, err := ops.Purge(ctx, b, ops.PurgeOptions{Session: "0b7e2f4a-3c1d-4e5f-8a9b-0c1d2e3f4a5b"}); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("purge of a session: %v", err)
	}
}

// Consistency finds counters and keyword entries that disagree with the
// messages, and Check reports them as corruption.
func TestConsistencyFindsDrift(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	e := openPG(t, dsn, engine.Options{Embedder: wordsEmbedder(16), NoVectorWorker: true})
	workload(t, e)
	if err := ops.Check(ctx, e); err != nil {
		t.Fatalf("before: %v", err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		"UPDATE channels SET message_count = message_count + 1 WHERE id = 'general'",
		"UPDATE keyword_stats SET docs = docs + 1 WHERE shard = 0",
		"UPDATE messages SET tfs = tfs || 7 WHERE id = 2",
		"DELETE FROM vector_outbox WHERE message_id = 3",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := ops.Consistency(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1 messages have a keyword entry", "keyword statistics count", "channel general counts", "1 messages have no vector"}
	if len(rep.Problems) != len(want) {
		t.Fatalf("problems %q, want %d", rep.Problems, len(want))
	}
	for i, w := range want {
		if !strings.Contains(rep.Problems[i], w) {
			t.Errorf("problem %d: %q, want it to say %q", i, rep.Problems[i], w)
		}
	}
	if err := ops.Check(ctx, e); !errors.Is(err, engine.ErrCorrupt) {
		t.Fatalf("check: %v, want ErrCorrupt", err)
	}
}

// A message that takes its id before another but commits after it is not
// passed over: Unread waits for writers holding ids, so the cursor never
// moves past an id that is not committed yet.
func TestUnreadWaitsForEarlierIDs(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	e := openPG(t, dsn, engine.Options{})
	if _, err := e.StoreMessage(ctx, engine.NewMessage{Channel: "general", Sender: "alice", Content: "first"}); err != nil {
		t.Fatal(err)
	}
	slow, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close(ctx)
	tx, err := slow.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var early int64
	if err := tx.QueryRow(ctx, `INSERT INTO messages (channel_id, channel_type, sender_id, content, content_hash, created_at, terms, tfs, doc_len)
		VALUES ('general', 'channel', 'alice', 'slow', 'h-slow', 0, '{slow}', '{1}', 1) RETURNING id`).Scan(&early); err != nil {
		t.Fatal(err)
	}
	late, err := e.StoreMessage(ctx, engine.NewMessage{Channel: "general", Sender: "alice", Content: "fast"})
	if err != nil || late.ID <= early {
		t.Fatalf("late write %+v (%v), want an id above %d", late, err, early)
	}
	got := make(chan engine.Unread, 1)
	go func() {
		u, err := e.Unread(ctx, engine.UnreadRequest{Agent: "bob"})
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	// Commit once Unread waits for the lock (or has answered without).
	watch, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	var u engine.Unread
	answered := false
	for waiting := 0; waiting == 0 && !answered; {
		select {
		case u = <-got:
			answered = true
		default:
			if err := watch.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'messages'::regclass").Scan(&waiting); err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if !answered {
		u = <-got
	}
	var ids []int64
	for _, m := range u.Messages {
		ids = append(ids, m.ID)
	}
	if len(ids) != 3 || ids[1] != early || ids[2] != late.ID {
		t.Fatalf("unread %v, want 3 with %d before %d", ids, early, late.ID)
	}
}

// GC with retention policies (age, items per channel, kept-forever types
// and pins, near-duplicate collapse) and Purge of a channel and of an
// agent delete the same messages on both stores, and leave PostgreSQL
// consistent.
func TestDifferentialRetention(t *testing.T) {
	ctx := context.Background()
	a, b := openPair(t, wordsEmbedder(32))
	workload(t, a)
	workload(t, b)
	for _, e := range []*engine.Engine{a, b} {
		for i, c := range []string{"alpha beta gamma delta", "delta gamma beta alpha", "beta alpha delta gamma", "something else entirely"} {
			m := engine.NewMessage{Channel: "dups", Sender: "dave", Content: c, CreatedAt: time.Date(2026, 10, 20, i, 0, 0, 0, time.UTC)}
			if i == 2 {
				m.Metadata = []byte(`{"pinned": true}`)
			}
			if _, err := e.StoreMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		if err := ops.SyncVectors(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	opts := ops.GCOptions{Policies: []ops.RetentionPolicy{
		{Name: "dups", Channels: []string{"dups"}, CollapseThreshold: 0.99},
		{Name: "notes", Channels: []string{"agent-notes:*"}, MaxItems: 3},
		{Name: "old", MaxAge: 20 * 24 * time.Hour},
	}}
	gc := func(dry bool) func(*engine.Engine) (any, error) {
		return func(e *engine.Engine) (any, error) {
			o := opts
			o.DryRun = dry
			rep, err := ops.GC(ctx, e, o)
			if err != nil {
				return nil, err
			}
			return []any{rep.Messages, rep.KeptForever, rep.Sessions}, nil
		}
	}
	planned := both(t, "gc dry run", a, b, gc(true)).([]any)
	items := planned[0].([]ops.GCItem)
	collapsed := 0
	for _, it := range items {
		if it.DuplicateOf != 0 {
			collapsed++
		}
	}
	if len(items) < 10 || collapsed != 1 || planned[1].(int) == 0 {
		t.Fatalf("gc plans %d items, %d collapsed (want 1: the other duplicate is pinned), %v kept forever", len(items), collapsed, planned[1])
	}
	both(t, "gc", a, b, gc(false))
	both(t, "gc again", a, b, gc(false))
	both(t, "channels after gc", a, b, func(e *engine.Engine) ([]engine.Channel, error) { return e.ListChannels(ctx, engine.Scope{}) })
	purge := func(o ops.PurgeOptions) func(*engine.Engine) (any, error) {
		return func(e *engine.Engine) (any, error) {
			rep, err := ops.Purge(ctx, e, o)
			if err != nil {
				return nil, err
			}
			return []any{rep.Messages, rep.Channels, rep.DryRun}, nil
		}
	}
	both(t, "purge channel dry", a, b, purge(ops.PurgeOptions{Channel: "ops", DryRun: true}))
	both(t, "purge channel", a, b, purge(ops.PurgeOptions{Channel: "ops"}))
	both(t, "purge agent", a, b, purge(ops.PurgeOptions{Agent: "dave"}))
	both(t, "purge unknown agent", a, b, purge(ops.PurgeOptions{Agent: "zed"}))
	both(t, "purge unknown channel", a, b, purge(ops.PurgeOptions{Channel: "ops"}))
	both(t, "channels after purge", a, b, func(e *engine.Engine) ([]engine.Channel, error) { return e.ListChannels(ctx, engine.Scope{}) })
	both(t, "agents after purge", a, b, func(e *engine.Engine) ([]engine.Agent, error) { return e.ListAgents(ctx, "") })
	if err := ops.Check(ctx, b); err != nil {
		t.Fatal(err)
	}
	sa, _ := ops.StoreStats(ctx, a)
	sb, _ := ops.StoreStats(ctx, b)
	if jsonOf(t, sa.ByChannel) != jsonOf(t, sb.ByChannel) {
		t.Fatalf("after gc: %v, %v", sa.ByChannel, sb.ByChannel)
	}
}

// fixedHead is a repository whose HEAD never moves: every repository
// has it.
type fixedHead string

func (h fixedHead) Head(string) (string, error) { return string(h), nil }

// testRepo is the repository the tests' notes are written in.
const testRepo = "/src/cairn"

// Searches restricted to what an agent has not read, or to notes whose
// breadcrumbs are valid at HEAD, return the same messages on both stores:
// identical for keyword search and listings, within the ranked tolerance
// for semantic and hybrid search; every result passes the filter.
func TestDifferentialSearchFilters(t *testing.T) {
	ctx := context.Background()
	const head = "89abcdef0123456789abcdef0123456789abcdef"
	opts := engine.Options{Now: clock(), Embedder: wordsEmbedder(64), NoVectorWorker: true, BreadcrumbRepos: fixedHead(head), BreadcrumbRepo: testRepo}
	a, err := sqlite.OpenEngine(ctx, t.TempDir(), opts, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	b := openPG(t, pgtest.Database(t), opts)
	workload(t, a)
	workload(t, b)
	valid := map[int64]bool{}
	for _, e := range []*engine.Engine{a, b} {
		if err := ops.SyncVectors(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := e.MarkRead(ctx, engine.MarkReadRequest{Agent: "bob", UpTo: 30}); err != nil {
			t.Fatal(err)
		}
		ms, err := ops.MessagesToMark(ctx, e, testRepo, head, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		marks := map[int64][]engine.BreadcrumbMark{}
		for i, m := range ms {
			state := engine.MarkValid
			if i%3 == 1 {
				state = engine.MarkChanged
			}
			valid[m.ID] = state == engine.MarkValid
			marks[m.ID] = []engine.BreadcrumbMark{{Kind: "file", Ref: "engine/hybrid.go:10-20", State: state}}
		}
		if err := ops.PutBreadcrumbMarks(ctx, e, testRepo, head, marks); err != nil {
			t.Fatal(err)
		}
	}
	filters := []engine.Filter{{UnreadBy: "bob"}, {BreadcrumbsValid: true}, {UnreadBy: "bob", BreadcrumbsValid: true},
		{UnreadBy: "carol", ChannelIDs: []string{"general", "ops"}}}
	passes := func(f engine.Filter, m engine.Message) bool {
		if f.UnreadBy == "bob" && (m.ID <= 30 || m.SenderID == "bob") || f.UnreadBy == "carol" && m.SenderID == "carol" {
			return false
		}
		return !f.BreadcrumbsValid || valid[m.ID]
	}
	found := make([]int, len(filters))
	for _, mode := range []engine.SearchMode{engine.ModeKeyword, engine.ModeSemantic, engine.ModeHybrid} {
		for fi, f := range filters {
			for _, q := range []string{"", "the outbox", "HNSW recall filters", "build cache go.mod", "Caroline decisions"} {
				req := engine.SearchRequest{Query: q, Filter: f, Limit: 5, Mode: mode, MinScore: new(float64)}
				ra, err := a.SearchDetailed(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				rb, err := b.SearchDetailed(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				found[fi] += len(rb.Results)
				for _, r := range rb.Results {
					if !passes(f, r.Message) {
						t.Fatalf("%s filter %d %q: postgres returned %d, which the filter excludes", mode, fi, q, r.Message.ID)
					}
				}
				if len(ra.Results) != len(rb.Results) {
					t.Fatalf("%s filter %d %q: sqlite %d results, postgres %d", mode, fi, q, len(ra.Results), len(rb.Results))
				}
				if mode == engine.ModeKeyword || q == "" {
					for i := range ra.Results {
						if ra.Results[i].Message.ID != rb.Results[i].Message.ID {
							t.Fatalf("%s filter %d %q: result %d: sqlite %d, postgres %d", mode, fi, q, i, ra.Results[i].Message.ID, rb.Results[i].Message.ID)
						}
					}
				} else if !noSignal(ra.Results) && !similarTop(ra.Results, rb.Results) {
					t.Fatalf("%s filter %d %q: overlap %d of %d", mode, fi, q, overlap(ra.Results, rb.Results), len(ra.Results))
				}
			}
		}
	}
	for fi, n := range found {
		if n < 20 {
			t.Errorf("filter %d: %d results in all, want the filter to keep some", fi, n)
		}
	}
	// Results and reads carry the cached check at HEAD; stale notes are
	// demoted alike.
	for id := range valid {
		both(t, fmt.Sprintf("message %d with its check", id), a, b, func(e *engine.Engine) (engine.Message, error) { return e.GetMessage(ctx, id) })
	}
	for _, q := range []string{"", "build cache go.mod"} {
		both(t, "stale demoted "+q, a, b, func(e *engine.Engine) ([]any, error) {
			r, err := e.SearchDetailed(ctx, engine.SearchRequest{Query: q, Mode: engine.ModeKeyword, Limit: 30, Ranking: engine.Ranking{StaleFactor: 0.5}})
			var out []any
			for _, h := range r.Results {
				out = append(out, h.Message.ID, h.Message.BreadcrumbCheck)
			}
			return out, err
		})
	}
}

// Rebuild recomputes keyword entries that drifted (keyword search then
// ranks as on the embedded store again) and switches a shared store to
// another model: a new set is built, becomes the only live one, and
// semantic search answers from it.
func TestRebuildOnPostgres(t *testing.T) {
	ctx := context.Background()
	opts := engine.Options{Now: clock(), Embedder: wordsEmbedder(32), NoVectorWorker: true}
	a, err := sqlite.OpenEngine(ctx, t.TempDir(), opts, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	dsn := pgtest.Database(t)
	b := openPG(t, dsn, opts)
	workload(t, a)
	workload(t, b)
	if err := ops.SyncVectors(ctx, b, nil); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{"UPDATE messages SET terms = '{x}', tfs = '{1}', doc_len = 1 WHERE id % 7 = 0",
		"UPDATE keyword_stats SET docs = docs + 5", "DELETE FROM keyword_postings WHERE message_id % 5 = 0"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := ops.Consistency(ctx, b); err != nil || rep.OK() {
		t.Fatalf("drift not found: %v %v", rep.Problems, err)
	}
	rep, err := ops.Rebuild(ctx, b, ops.RebuildOptions{SkipVectors: true})
	if err != nil || !rep.FTSRebuilt || rep.Set.ID != 0 {
		t.Fatalf("rebuild keywords: %+v %v", rep, err)
	}
	if err := ops.Check(ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"the outbox", "build cache go.mod", "Caroline decisions"} {
		both(t, "keyword "+q, a, b, func(e *engine.Engine) ([]int64, error) {
			r, err := e.SearchDetailed(ctx, engine.SearchRequest{Query: q, Mode: engine.ModeKeyword})
			var ids []int64
			for _, h := range r.Results {
				ids = append(ids, h.Message.ID)
			}
			return ids, err
		})
	}

	// Another model: a process with it searches by keyword only until the
	// rebuild switches the store to its model.
	c := openPG(t, dsn, engine.Options{Now: clock(), Embedder: wordsEmbedder(48), NoVectorWorker: true})
	if _, err := c.SearchDetailed(ctx, engine.SearchRequest{Query: "the outbox", Mode: engine.ModeSemantic}); err == nil {
		t.Fatal("semantic search with another model than the store's succeeded")
	}
	rep, err = ops.Rebuild(ctx, c, ops.RebuildOptions{})
	if err != nil || rep.Set.ModelID != "lexical-hash-bow-48" || rep.Set.State != engine.SetActive || rep.Resumed || rep.Embedded == 0 {
		t.Fatalf("rebuild with another model: %+v %v", rep, err)
	}
	sets, err := ops.VectorSets(ctx, c)
	if err != nil || len(sets) != 1 || sets[0].ID != rep.Set.ID || sets[0].Pending != 0 {
		t.Fatalf("sets after the switch: %+v %v", sets, err)
	}
	r, err := c.SearchDetailed(ctx, engine.SearchRequest{Query: "vector outbox rows are claimed with a lease", Mode: engine.ModeSemantic, Limit: 3})
	if err != nil || len(r.Results) != 3 || !strings.Contains(r.Results[0].Message.Content, "outbox") {
		t.Fatalf("semantic search after the switch: %+v %v", r, err)
	}
	if err := ops.Check(ctx, c); err != nil {
		t.Fatal(err)
	}
}

// openPG opens an engine over the PostgreSQL database dsn, closed when
// the test ends.
func openPG(t *testing.T, dsn string, opts engine.Options) *engine.Engine {
	t.Helper()
	st, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.OpenBackend(context.Background(), st, postgres.Kind, "", opts)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// A serving process's scheduled jobs run on PostgreSQL: retention deletes
// what the policy no longer keeps and the continuous export writes the
// channels, with no error (sessions have nothing to export there).
func TestLifecycleOnPostgres(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := openPG(t, pgtest.Database(t), engine.Options{Now: time.Now})
	old, err := e.WriteNote(ctx, engine.NewNote{Agent: "tmp", Content: "scratch", CreatedAt: time.Now().Add(-2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	errs := make(chan error, 100)
	done := make(chan error, 1)
	go func() {
		done <- ops.RunLifecycle(ctx, e, ops.LifecycleOptions{
			GCEvery:     20 * time.Millisecond,
			GC:          ops.GCOptions{Policies: []ops.RetentionPolicy{{Channels: []string{"agent-notes:tmp"}, MaxAge: time.Hour}}, NoVacuum: true},
			ExportEvery: 20 * time.Millisecond,
			Export:      ingest.ExportSessionsOptions{OutDir: out, Formats: []string{ingest.FormatJSONL}},
			OnError:     func(err error) { errs <- err },
		})
	}()
	if _, err := e.StoreMessage(ctx, engine.NewMessage{Channel: "general", Sender: "alice", Content: "exported continuously"}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, gone := e.GetMessage(ctx, old.ID)
		b, _ := os.ReadFile(filepath.Join(out, ingest.MessagesDir, "general.jsonl"))
		if errors.Is(gone, engine.ErrNotFound) && strings.Contains(string(b), "exported continuously") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("scheduled gc and export not done: %v, %q", gone, b)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("RunLifecycle returned %v", err)
	}
	close(errs)
	for err := range errs {
		t.Errorf("lifecycle error: %v", err)
	}
}

// Importing Claude Code sessions gives the same report, sessions, records,
// chunk messages (same ids), references, exports and stats on both stores;
// a second import finds everything known, and a grown file resumes.
func TestDifferentialSessions(t *testing.T) {
	ctx := context.Background()
	a, b := openPair(t, nil)
	tree, err := ccfixture.Write(t.TempDir(), ccfixture.Options{Rand: rand.New(rand.NewPCG(3, 4)), Projects: 2, SessionsPerProject: 2, Turns: 4,
		SharedInstruction: "follow the repository's style guide", Compact: true, Branch: true, Sidechain: true})
	if err != nil {
		t.Fatal(err)
	}
	imp := func(e *engine.Engine) (*ingest.ImportSessionsReport, error) {
		return ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: tree.Root})
	}
	rep := both(t, "import", a, b, imp)
	if rep.Added == 0 || rep.Chunks == 0 || rep.ContentsShared == 0 || rep.FilesFailed != 0 {
		t.Fatalf("import: %+v", rep)
	}
	if again := both(t, "import again", a, b, imp); again.Added != 0 {
		t.Fatalf("second import added %d", again.Added)
	}
	appendFile(t, tree.Sessions[0].Path, `{"type":"user","uuid":"ffffffff-0000-4000-8000-000000000001","parentUuid":null,"sessionId":"`+
		tree.Sessions[0].ID+`","timestamp":"2026-01-06T10:00:00.000Z","message":{"role":"user","content":"one more \u0000 question"}}`+"\n")
	if grown := both(t, "import of a grown file", a, b, imp); grown.Added != 1 {
		t.Fatalf("grown import: %+v", grown)
	}
	sessions := both(t, "sessions", a, b, func(e *engine.Engine) ([]engine.Session, error) { return ingest.ListSessions(ctx, e) })
	for _, s := range sessions {
		both(t, "records "+s.ID, a, b, func(e *engine.Engine) ([]engine.SessionRecord, error) { return ingest.SessionRecords(ctx, e, s.ID) })
		both(t, "jsonl "+s.ID, a, b, func(e *engine.Engine) (string, error) {
			var buf strings.Builder
			err := ingest.WriteSessionJSONL(ctx, e, s.ID, &buf)
			return buf.String(), err
		})
	}
	both(t, "missing session", a, b, func(e *engine.Engine) (engine.Session, error) {
		return ingest.GetSession(ctx, e, "0b7e2f4a-3c1d-4e5f-8a9b-0c1d2e3f4a5b")
	})
	hits := both(t, "chunk search", a, b, func(e *engine.Engine) ([]int64, error) {
		r, err := e.SearchDetailed(ctx, engine.SearchRequest{Query: "style guide", Mode: engine.ModeKeyword, Filter: engine.Filter{ChannelIDs: []string{engine.SessionChannel}}})
		var ids []int64
		for _, h := range r.Results {
			ids = append(ids, h.Message.ID)
		}
		return ids, err
	})
	if len(hits) == 0 {
		t.Fatal("no chunk found")
	}
	both(t, "refs", a, b, func(e *engine.Engine) ([]engine.SessionRef, error) { return ingest.SessionRefs(ctx, e, hits[0]) })
	both(t, "session stats", a, b, func(e *engine.Engine) (engine.SessionStats, error) {
		st, err := ops.StoreStats(ctx, e)
		if err != nil {
			return engine.SessionStats{}, err
		}
		return st.Sessions, nil
	})
	dirA, dirB := t.TempDir(), t.TempDir()
	both(t, "export sessions", a, b, func(e *engine.Engine) (int, error) {
		fs, err := ingest.ExportSessions(ctx, e, ingest.ExportSessionsOptions{All: true, OutDir: map[*engine.Engine]string{a: dirA, b: dirB}[e]})
		return len(fs), err
	})
	if err := ops.Check(ctx, b); err != nil {
		t.Fatal(err)
	}

	// Retention of sessions: an excluded one, a purged one, then the rest
	// by age, each with the contents and chunks only it holds.
	gc := func(o ops.GCOptions) func(*engine.Engine) (any, error) {
		return func(e *engine.Engine) (any, error) {
			rep, err := ops.GC(ctx, e, o)
			if err != nil {
				return nil, err
			}
			return []any{rep.Messages, rep.Sessions, rep.ContentsDeleted}, nil
		}
	}
	purge := func(o ops.PurgeOptions) func(*engine.Engine) (any, error) {
		return func(e *engine.Engine) (any, error) {
			rep, err := ops.Purge(ctx, e, o)
			if err != nil {
				return nil, err
			}
			return []any{rep.Messages, rep.Sessions, rep.ContentsDeleted}, nil
		}
	}
	both(t, "gc excluded dry run", a, b, gc(ops.GCOptions{ExcludeSessions: []string{sessions[0].ID}, DryRun: true}))
	if r := both(t, "gc excluded", a, b, gc(ops.GCOptions{ExcludeSessions: []string{sessions[0].ID}})).([]any); len(r[1].([]ops.GCSession)) != 1 || len(r[0].([]ops.GCItem)) == 0 {
		t.Fatalf("gc of an excluded session: %v", r)
	}
	both(t, "purge session dry run", a, b, purge(ops.PurgeOptions{Session: sessions[1].ID, DryRun: true}))
	both(t, "purge session", a, b, purge(ops.PurgeOptions{Session: sessions[1].ID}))
	both(t, "purge session again", a, b, purge(ops.PurgeOptions{Session: sessions[1].ID}))
	both(t, "gc by age", a, b, gc(ops.GCOptions{SessionMaxAge: 200 * 24 * time.Hour}))
	if left := both(t, "sessions after gc", a, b, func(e *engine.Engine) ([]engine.Session, error) { return ingest.ListSessions(ctx, e) }); len(left) != 0 {
		t.Fatalf("sessions left after gc by age: %v", left)
	}
	both(t, "stats after gc", a, b, func(e *engine.Engine) (any, error) {
		st, err := ops.StoreStats(ctx, e)
		if err != nil {
			return nil, err
		}
		return []any{st.Sessions, st.ByChannel}, nil
	})
	if err := ops.Check(ctx, b); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// After `cairn migrate` (CopyMessagesTo) of a data dir with imported
// sessions, importing the same Claude Code folder into PostgreSQL makes
// the sessions again over the chunk messages already copied: none is
// stored twice.
func TestSessionsAfterMigrate(t *testing.T) {
	ctx := context.Background()
	a, b := openPair(t, nil)
	tree, err := ccfixture.Write(t.TempDir(), ccfixture.Options{Rand: rand.New(rand.NewPCG(7, 8)), Projects: 1, SessionsPerProject: 2, Turns: 3})
	if err != nil {
		t.Fatal(err)
	}
	ra, err := ingest.ImportSessions(ctx, a, ingest.ImportSessionsOptions{Root: tree.Root})
	if err != nil || ra.Chunks == 0 {
		t.Fatalf("import: %+v %v", ra, err)
	}
	if _, err := ingest.CopyChannelsTo(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	cp, err := ingest.CopyMessagesTo(ctx, a, b, nil)
	if err != nil || cp.Target != cp.Source {
		t.Fatalf("copy: %+v %v", cp, err)
	}
	rb, err := ingest.ImportSessions(ctx, b, ingest.ImportSessionsOptions{Root: tree.Root})
	if err != nil || rb.Chunks != 0 || rb.Added != ra.Added || rb.FilesFailed != 0 {
		t.Fatalf("import after the copy: %+v %v (want %d records and no new chunk)", rb, err, ra.Added)
	}
	sb, err := ops.StoreStats(ctx, b)
	if err != nil || sb.Messages != cp.Source || sb.Sessions.Chunks != int64(ra.Chunks) {
		t.Fatalf("stats after: %+v %v", sb, err)
	}
	if err := ops.Check(ctx, b); err != nil {
		t.Fatal(err)
	}
}

// A near-duplicate write returns the same earlier message on both stores,
// and a correction of it is stored on both.
func TestDifferentialNearDuplicates(t *testing.T) {
	ctx := context.Background()
	opts := engine.Options{Now: clock(), Embedder: wordsEmbedder(64), NoVectorWorker: true, NearDuplicateCosine: 0.9}
	a, err := sqlite.OpenEngine(ctx, t.TempDir(), opts, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	b := openPG(t, pgtest.Database(t), opts)
	note := func(content string, supersedes int64) func(e *engine.Engine) (engine.WriteResult, error) {
		return func(e *engine.Engine) (engine.WriteResult, error) {
			return e.WriteNote(ctx, engine.NewNote{Agent: "bob", Content: content, Supersedes: supersedes})
		}
	}
	first := both(t, "first", a, b, note("the outbox drains every ten seconds", 0))
	both(t, "other", a, b, note("vectors are quantized to eight bits", 0))
	both(t, "sync", a, b, func(e *engine.Engine) (int, error) { return 0, ops.SyncVectors(ctx, e, nil) })
	dup := both(t, "near-duplicate", a, b, note("The outbox drains every ten seconds!", 0))
	if dup.Created || !dup.NearDuplicate || dup.ID != first.ID {
		t.Fatalf("near-duplicate: %+v", dup)
	}
	if fix := both(t, "correction", a, b, note("The outbox drains every ten seconds!", first.ID)); !fix.Created {
		t.Fatalf("correction: %+v", fix)
	}
}
