package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/claudecode/ccfixture"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/pgtest"
)

// A data dir holding messages, imported sessions, read cursors and
// breadcrumb marks is copied whole to PostgreSQL and from there to a new
// data dir (Engine.TransferTo, what cairn migrate runs): on all three the
// sessions, their records and JSONL, the unread lists, the unread_by and
// breadcrumbs_valid searches and the agents are the same, importing the
// same files again finds everything there, cairn check passes and counts
// the same parts; copying again writes nothing.
func TestTransferWholeStore(t *testing.T) {
	ctx := context.Background()
	const head = "0123456789abcdef0123456789abcdef01234567"
	opts := engine.Options{Now: clock(), NoVectorWorker: true, BreadcrumbRepos: fixedHead(head), BreadcrumbRepo: testRepo}
	a, err := sqlite.OpenEngine(ctx, t.TempDir(), opts, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ids := workload(t, a)
	tree, err := ccfixture.Write(t.TempDir(), ccfixture.Options{Rand: rand.New(rand.NewPCG(3, 4)), Projects: 2, SessionsPerProject: 2, Turns: 4})
	if err != nil {
		t.Fatal(err)
	}
	imp, err := ingest.ImportSessions(ctx, a, ingest.ImportSessionsOptions{Root: tree.Root})
	if err != nil || imp.Chunks == 0 || imp.FilesFailed != 0 {
		t.Fatalf("import: %+v %v", imp, err)
	}
	// A message written after the sessions, and one of the chunks deleted
	// (its chunk row keeps no message): ids with gaps, out of any order a
	// copy could keep by chance.
	if _, err := a.StoreMessage(ctx, engine.NewMessage{Channel: "general", Sender: "alice", Content: "after the import: the console shows sessions"}); err != nil {
		t.Fatal(err)
	}
	// Agents keep the times of messages deleted since: frank's latest and
	// gina's only message go.
	for _, m := range []engine.NewMessage{
		{Channel: "ops", Sender: "frank", Content: "frank's first finding", CreatedAt: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)},
		{Channel: "ops", Sender: "frank", Content: "frank's last finding", CreatedAt: time.Date(2026, 10, 30, 0, 0, 0, 0, time.UTC)},
		{Channel: "ops", Sender: "gina", Content: "gina's only finding", CreatedAt: time.Date(2026, 10, 2, 0, 0, 0, 0, time.UTC)},
	} {
		r, err := a.StoreMessage(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if m.Content != "frank's first finding" {
			if err := a.DeleteMessage(ctx, r.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []engine.MarkReadRequest{{Agent: "bob", UpTo: ids[30]}, {Agent: "carol", Channel: "general", UpTo: ids[50]}, {Agent: "dave", Project: "cairn"}} {
		if _, err := a.MarkRead(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := ops.MessagesToMark(ctx, a, testRepo, head, 0, 0)
	if err != nil || len(ms) == 0 {
		t.Fatalf("messages to mark: %d %v", len(ms), err)
	}
	marks := map[int64][]engine.BreadcrumbMark{}
	for i, m := range ms {
		state := engine.MarkValid
		if i%2 == 1 {
			state = engine.MarkChanged
		}
		marks[m.ID] = []engine.BreadcrumbMark{{Kind: "file", Ref: "engine/hybrid.go:10-20", State: state}}
	}
	if err := ops.PutBreadcrumbMarks(ctx, a, testRepo, head, marks); err != nil {
		t.Fatal(err)
	}

	b := openPG(t, pgtest.Database(t), opts)
	rep, err := ingest.TransferTo(ctx, a, b, nil)
	if err != nil {
		t.Fatalf("copy to PostgreSQL: %v", err)
	}
	if rep.SessionsCopied != int(rep.SourceParts.Sessions) || rep.SourceParts.Sessions == 0 || rep.SourceParts.Cursors != 3 || rep.SourceParts.Marks != int64(len(marks)) {
		t.Fatalf("copy to PostgreSQL: %+v", rep)
	}
	c, err := sqlite.OpenEngine(ctx, t.TempDir(), opts, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := ingest.TransferTo(ctx, b, c, nil); err != nil {
		t.Fatalf("copy back: %v", err)
	}
	stores := []*engine.Engine{a, b, c}
	names := []string{"source", "PostgreSQL", "copy back"}
	same := func(what string, f func(e *engine.Engine) (any, error)) {
		t.Helper()
		var want any
		for i, e := range stores {
			got, err := f(e)
			if err != nil {
				t.Fatalf("%s on the %s: %v", what, names[i], err)
			}
			if i == 0 {
				want = got
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s on the %s:\n%v\nwant (source):\n%v", what, names[i], got, want)
			}
		}
	}
	same("sessions", func(e *engine.Engine) (any, error) { return ingest.ListSessions(ctx, e) })
	sessions, err := ingest.ListSessions(ctx, a)
	if err != nil || len(sessions) != 4 {
		t.Fatalf("sessions: %d %v", len(sessions), err)
	}
	for _, s := range sessions {
		same("records of "+s.ID, func(e *engine.Engine) (any, error) { return ingest.SessionRecords(ctx, e, s.ID) })
		same("JSONL of "+s.ID, func(e *engine.Engine) (any, error) {
			var buf bytes.Buffer
			err := ingest.WriteSessionJSONL(ctx, e, s.ID, &buf)
			return buf.String(), err
		})
	}
	same("agents", func(e *engine.Engine) (any, error) { return e.ListAgents(ctx, "") })
	for _, req := range []engine.UnreadRequest{{Agent: "bob", Limit: 200}, {Agent: "carol", Channel: "general", Limit: 200}, {Agent: "dave", Project: "cairn", Limit: 200}, {Agent: "erin", Limit: 200}} {
		same(fmt.Sprintf("unread %+v", req), func(e *engine.Engine) (any, error) {
			u, err := e.Unread(ctx, req)
			return fmt.Sprint(u.Count, contentsOf(u.Messages)), err
		})
	}
	for _, f := range []engine.Filter{{UnreadBy: "bob"}, {UnreadBy: "carol", ChannelIDs: []string{"general"}}, {BreadcrumbsValid: true}, {UnreadBy: "bob", BreadcrumbsValid: true}} {
		for _, q := range []string{"", "the outbox", "build cache go.mod"} {
			same(fmt.Sprintf("search %q %+v", q, f), func(e *engine.Engine) (any, error) {
				res, err := e.SearchDetailed(ctx, engine.SearchRequest{Query: q, Filter: f, Limit: 100, Mode: engine.ModeKeyword})
				if err != nil {
					return nil, err
				}
				out := make([]string, len(res.Results))
				for i, r := range res.Results {
					ch, _ := json.Marshal(r.Message.BreadcrumbCheck)
					out[i] = fmt.Sprintf("%s|%.6f|%s", r.Message.Content, r.Score, ch)
				}
				return out, nil
			})
		}
	}
	same("parts", func(e *engine.Engine) (any, error) {
		rep, err := ops.Consistency(ctx, e)
		if err == nil && !rep.OK() {
			err = fmt.Errorf("check: %v", rep.Problems)
		}
		if rep.Parts == nil {
			return nil, fmt.Errorf("check counts no parts")
		}
		p := *rep.Parts
		return p, err
	})
	for i, e := range stores[1:] {
		again, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: tree.Root})
		if err != nil || again.Added != 0 || again.Chunks != 0 || again.ContentsNew != 0 || again.FilesFailed != 0 {
			t.Fatalf("import again into the %s: %+v %v (want nothing new)", names[i+1], again, err)
		}
		if err := ops.Check(ctx, e); err != nil {
			t.Fatalf("check of the %s: %v", names[i+1], err)
		}
	}
	// Copying again finds everything there.
	rep2, err := ingest.TransferTo(ctx, a, b, nil)
	if err != nil || rep2.Copied != 0 || rep2.SessionsCopied != 0 || rep2.ContentsCopied != 0 || !reflect.DeepEqual(rep2.TargetParts, rep.TargetParts) {
		t.Fatalf("copy again: %+v %v\nfirst: %+v", rep2, err, rep)
	}
}

func contentsOf(ms []engine.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ChannelID + "|" + m.SenderID + "|" + m.Content
	}
	return out
}
