package postgres_test

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/claudecode/ccfixture"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
)

// gc.max_bytes on PostgreSQL plans as on a data dir: over the quota by the
// same amount, both stores plan the same sessions (least recently active
// first) and then the same messages (oldest first, never pinned ones,
// decisions or policies). Run for real on PostgreSQL, the plan is deleted,
// the tables are compacted so that the store's size (cairn's tables)
// drops, and check passes.
func TestQuotaOnPostgres(t *testing.T) {
	ctx := context.Background()
	a, b := openPair(t, nil)
	tree, err := ccfixture.Write(t.TempDir(), ccfixture.Options{Rand: rand.New(rand.NewPCG(5, 6)), Projects: 1, SessionsPerProject: 3, Turns: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []*engine.Engine{a, b} {
		workload(t, e)
		if _, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: tree.Root}); err != nil {
			t.Fatal(err)
		}
	}
	plan := func(e *engine.Engine, over int64, dry bool) *ops.GCReport {
		t.Helper()
		probe, err := ops.GC(ctx, e, ops.GCOptions{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		max := probe.BytesBefore - over
		if over < 0 {
			max = 1 // everything the quota may delete
		}
		rep, err := ops.GC(ctx, e, ops.GCOptions{DryRun: dry, MaxBytes: max})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	type planned struct {
		Sessions []string
		Messages []int64
		Notes    []string
	}
	shape := func(r *ops.GCReport) planned {
		var p planned
		for _, s := range r.Sessions {
			p.Sessions = append(p.Sessions, s.ID)
		}
		for _, m := range r.Messages {
			if m.Policy != "quota" && m.Policy != "sessions" {
				t.Fatalf("message %d planned by %q", m.ID, m.Policy)
			}
			p.Messages = append(p.Messages, m.ID)
		}
		// The note of what stays over gives each store's own size.
		for _, n := range r.Notes {
			p.Notes = append(p.Notes, strings.Join(strings.Fields(n)[:8], " "))
		}
		return p
	}
	// Over by a part of the sessions, by all of them and some messages, by
	// more than can go.
	for _, over := range []int64{5_000, 60_000, -1} {
		pa, pb := shape(plan(a, over, true)), shape(plan(b, over, true))
		if len(pa.Sessions) == 0 {
			t.Fatalf("over by %d: nothing planned on the data dir", over)
		}
		if !reflect.DeepEqual(pa, pb) {
			t.Fatalf("over by %d: PostgreSQL plans %+v, the data dir %+v", over, pb, pa)
		}
	}
	msgs, err := b.GetMessages(ctx, shape(plan(b, -1, true)).Messages)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.MessageType == engine.TypeDecision || m.MessageType == "policy" {
			t.Fatalf("the quota plans to delete decision %d", m.ID)
		}
	}
	rep := plan(b, 60_000, false)
	if len(rep.Messages) == 0 || rep.BytesAfter >= rep.BytesBefore {
		t.Fatalf("gc on PostgreSQL: %d messages, %d -> %d bytes", len(rep.Messages), rep.BytesBefore, rep.BytesAfter)
	}
	got, err := b.GetMessages(ctx, []int64{rep.Messages[0].ID})
	if err != nil || len(got) != 0 {
		t.Fatalf("a deleted message is still there: %v %v", got, err)
	}
	if ss, err := ingest.ListSessions(ctx, b); err != nil || len(ss) != 0 {
		t.Fatalf("sessions left: %d %v", len(ss), err)
	}
	if err := ops.Check(ctx, b); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL: %d messages and %d sessions deleted, %d -> %d bytes", len(rep.Messages), len(rep.Sessions), rep.BytesBefore, rep.BytesAfter)
}
