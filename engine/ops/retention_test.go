package ops_test

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

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/claudecode/ccfixture"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

func gcIDs(rep *ops.GCReport) []int64 {
	var ids []int64
	for _, m := range rep.Messages {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	return ids
}

func TestGCPolicies(t *testing.T) {
	ctx := context.Background()
	e := enginetest.OpenIn(t, "", engine.Options{})
	day := 24 * time.Hour
	var wantGone []int64
	for i := range 5 {
		wantGone = append(wantGone, enginetest.AgedNote(t, e, "a", fmt.Sprintf("old observation %d", i), 90*day, 0.5, "", ""))
	}
	pinned := enginetest.AgedNote(t, e, "a", "old but pinned", 90*day, 0.5, "", `{"pinned": true}`)
	decision := enginetest.AgedNote(t, e, "a", "old decision: use WAL", 90*day, 0.9, engine.TypeDecision, "")
	fresh := enginetest.AgedNote(t, e, "a", "fresh observation", day, 0.5, "", "")
	// agent b: 6 notes, keep the 3 most important (confidence, then recency).
	var b []int64
	for i, c := range []float64{0.9, 0.1, 0.5, 0.5, 0.2, 0.8} {
		b = append(b, enginetest.AgedNote(t, e, "b", fmt.Sprintf("note %d of b", i), time.Duration(10-i)*day, c, "", ""))
	}
	// b[3] (0.5, newer) beats b[2] (0.5, older).
	wantGone = append(wantGone, b[1], b[2], b[4])
	slices.Sort(wantGone)
	// A message no policy matches stays.
	other := enginetest.AgedNote(t, e, "c", "unmatched", 400*day, 0.1, "", "")

	policies := []ops.RetentionPolicy{
		{Name: "b-cap", Channels: []string{"agent-notes:b"}, MaxItems: 3},
		{Name: "a-age", Channels: []string{"agent-notes:a*"}, MaxAge: 30 * day},
	}
	dry, err := ops.GC(ctx, e, ops.GCOptions{Policies: policies, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := gcIDs(dry); !slices.Equal(got, wantGone) {
		t.Fatalf("dry run would delete %v, want %v\n%+v", got, wantGone, dry.Messages)
	}
	if dry.KeptForever != 2 {
		t.Errorf("kept forever = %d, want 2 (pinned + decision)", dry.KeptForever)
	}
	for _, m := range dry.Messages {
		if m.Reason == "" || m.Policy == "" {
			t.Errorf("item without reason: %+v", m)
		}
	}
	if _, err := e.GetMessage(ctx, wantGone[0]); err != nil {
		t.Fatalf("dry run deleted: %v", err)
	}
	rep, err := ops.GC(ctx, e, ops.GCOptions{Policies: policies})
	if err != nil {
		t.Fatal(err)
	}
	if got := gcIDs(rep); !slices.Equal(got, wantGone) {
		t.Fatalf("deleted %v, want %v", got, wantGone)
	}
	for _, id := range wantGone {
		if _, err := e.GetMessage(ctx, id); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("message %d still there: %v", id, err)
		}
	}
	for _, id := range []int64{pinned, decision, fresh, other, b[0], b[3], b[5]} {
		if _, err := e.GetMessage(ctx, id); err != nil {
			t.Errorf("message %d should stay: %v", id, err)
		}
	}
	hits, err := e.Search(ctx, engine.SearchRequest{Query: "old observation"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if strings.HasPrefix(h.Message.Content, "old observation") {
			t.Errorf("search still finds deleted message %d", h.Message.ID)
		}
	}
	// Lifting the protections deletes them too.
	rep, err = ops.GC(ctx, e, ops.GCOptions{Policies: []ops.RetentionPolicy{{Channels: []string{"agent-notes:a"}, MaxAge: 30 * day, ForgetPinned: true, ForgetDecisions: true}}})
	if err != nil || !slices.Equal(gcIDs(rep), []int64{pinned, decision}) {
		t.Errorf("forget protected: %v %v", err, gcIDs(rep))
	}
	// Bad policies.
	for _, p := range []ops.RetentionPolicy{{MaxAge: -1}, {MaxItems: -1}, {Channels: []string{"[x"}}, {CollapseThreshold: 1.5}, {CollapseMinAge: 2, CollapseMaxAge: 1}} {
		var inv *engine.InvalidError
		if _, err := ops.GC(ctx, e, ops.GCOptions{Policies: []ops.RetentionPolicy{p}}); !errors.As(err, &inv) {
			t.Errorf("policy %+v: %v, want InvalidError", p, err)
		}
	}
}

// fakeVectors is a hand-written VectorLookup over a fixed map.
type fakeVectors map[int64][]float32

func (f fakeVectors) Vectors(_ context.Context, ids []int64) (map[int64][]float32, error) {
	out := map[int64][]float32{}
	for _, id := range ids {
		if v, ok := f[id]; ok {
			out[id] = v
		}
	}
	return out, nil
}

func TestGCCollapse(t *testing.T) {
	ctx := context.Background()
	e := enginetest.OpenIn(t, "", engine.Options{})
	day := 24 * time.Hour
	a1 := enginetest.AgedNote(t, e, "a", "build uses make", 10*day, 0.9, "", "")
	a2 := enginetest.AgedNote(t, e, "a", "the build uses make", 9*day, 0.6, "", "")
	b1 := enginetest.AgedNote(t, e, "a", "tests need -race", 8*day, 0.5, "", "")
	b2 := enginetest.AgedNote(t, e, "a", "tests must pass -race", 7*day, 0.5, "", "")
	young := enginetest.AgedNote(t, e, "a", "build uses make!", time.Hour, 0.1, "", "")
	vecs := fakeVectors{
		a1: {1, 0, 0}, a2: {0.99, 0.05, 0}, // cosine ~0.9987
		b1: {0, 1, 0}, b2: {0, 0.97, 0.2}, // cosine ~0.979
		young: {1, 0, 0},
	}
	pol := []ops.RetentionPolicy{{Name: "dedup", Channels: []string{"agent-notes:*"}, CollapseThreshold: 0.95, CollapseMinAge: 2 * day}}
	rep, err := ops.GC(ctx, e, ops.GCOptions{Policies: pol, Vectors: vecs, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	// a2 loses to a1 (confidence); b1 loses to b2 (same confidence, newer);
	// young is outside the age range.
	if got := gcIDs(rep); !slices.Equal(got, []int64{a2, b1}) {
		t.Fatalf("collapse would delete %v, want %v (%+v)", got, []int64{a2, b1}, rep.Messages)
	}
	for _, m := range rep.Messages {
		want := map[int64]int64{a2: a1, b1: b2}[m.ID]
		if m.DuplicateOf != want || !strings.Contains(m.Reason, "near-duplicate") {
			t.Errorf("item %+v, want duplicate of %d", m, want)
		}
	}
	rep, err = ops.GC(ctx, e, ops.GCOptions{Policies: pol, DryRun: true})
	if err != nil || len(rep.Messages) != 0 || len(rep.Notes) != 1 {
		t.Errorf("without vectors: %v %+v", err, rep)
	}
}

func TestGCSecretLeavesDisk(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := enginetest.OpenEngine(ctx, dir, engine.Options{Now: func() time.Time { return enginetest.RetentionNow }})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "zebracorn7731passphrase"
	for i := range 300 {
		enginetest.AgedNote(t, e, "keep", fmt.Sprintf("ordinary note %d about the build and the tests %s", i, strings.Repeat("filler ", i%20)), time.Hour, 0.5, "", "")
	}
	enginetest.AgedNote(t, e, "leaky", "the launch passphrase is "+secret+" do not share", 60*24*time.Hour, 0.5, "", "")
	// The secret is on disk before GC (so the check below means something).
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if !dirContains(t, dir, secret) {
		t.Fatal("secret not found on disk before GC: the test would prove nothing")
	}
	e = enginetest.OpenIn(t, dir, engine.Options{})
	rep, err := ops.GC(ctx, e, ops.GCOptions{Policies: []ops.RetentionPolicy{{Channels: []string{"agent-notes:leaky"}, MaxAge: 30 * 24 * time.Hour}}})
	if err != nil || len(rep.Messages) != 1 {
		t.Fatalf("gc: %v %+v", err, rep)
	}
	enginetest.AssertNotInDir(t, e.Dir(), secret)
	if rep.BytesAfter <= 0 {
		t.Errorf("bytes after = %d", rep.BytesAfter)
	}
}

func dirContains(t *testing.T, dir, s string) bool {
	found := false
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), s) || strings.Contains(string(b), strings.ToLower(s)) {
			found = true
		}
		return nil
	})
	return found
}

func TestGCSessions(t *testing.T) {
	ctx := context.Background()
	mk := func(seed uint64, start time.Time) *ccfixture.Tree {
		tr, err := ccfixture.Write(t.TempDir(), ccfixture.Options{Rand: rand.New(rand.NewPCG(seed, seed)), Start: start, SharedInstruction: enginetest.SharedInstruction, Projects: 1, Turns: 4})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	old := mk(1, time.Date(2025, 10, 1, 9, 0, 0, 0, time.UTC))
	recent := mk(2, time.Date(2026, 1, 31, 9, 0, 0, 0, time.UTC))
	const unique = "unicornzebra4455 deprecated rollout plan"
	enginetest.AppendFile(t, old.Sessions[0].Path, `{"type":"user","uuid":"eeeeeeee-0000-4000-8000-000000000001","parentUuid":null,"sessionId":"`+old.Sessions[0].ID+`","timestamp":"2025-10-01T12:00:00.000Z","message":{"role":"user","content":"`+unique+`"}}`+"\n")
	e := enginetest.OpenIn(t, "", engine.Options{})
	for _, tr := range []*ccfixture.Tree{old, recent} {
		if _, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: tr.Root}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := ops.GC(ctx, e, ops.GCOptions{SessionMaxAge: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sessions) != len(old.Sessions) || rep.ContentsDeleted == 0 || len(rep.Messages) == 0 {
		t.Fatalf("gc sessions: %+v", rep)
	}
	for _, s := range old.Sessions {
		if _, err := ingest.GetSession(ctx, e, s.ID); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("old session %s: %v", s.ID, err)
		}
	}
	for _, s := range recent.Sessions {
		recs, err := ingest.SessionRecords(ctx, e, s.ID)
		if err != nil || len(recs) != s.Records {
			t.Errorf("recent session %s: %d records, %v", s.ID, len(recs), err)
		}
	}
	// The shared instruction survives (recent sessions use it) and now
	// points only at recent sessions.
	hits, err := e.Search(ctx, engine.SearchRequest{Query: "CLAUDE.md commit", Filter: engine.Filter{ChannelIDs: []string{engine.SessionChannel}}, Limit: 1})
	if err != nil || len(hits) != 1 {
		t.Fatalf("search: %v %d", err, len(hits))
	}
	refs, _ := ingest.SessionRefs(ctx, e, hits[0].Message.ID)
	if len(refs) != len(recent.Sessions) {
		t.Errorf("refs = %d, want %d", len(refs), len(recent.Sessions))
	}
	enginetest.AssertNotInDir(t, e.Dir(), "unicornzebra4455")
}

func TestStoreRedacts(t *testing.T) {
	ctx := context.Background()
	e := enginetest.OpenIn(t, "", engine.Options{Redactor: enginetest.DefaultRedactor(t)})
	res, err := e.WriteNote(ctx, engine.NewNote{Agent: "a", Content: "deploy with token " + enginetest.GHSecret + " today"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Redactions != "github-pat=1" {
		t.Errorf("Redactions = %q", res.Redactions)
	}
	m, err := e.GetMessage(ctx, res.ID)
	if err != nil || m.Content != "deploy with token [REDACTED:github-pat] today" {
		t.Errorf("stored %q (%v)", m.Content, err)
	}
	// The same secret again is the same redacted content: idempotent.
	res2, err := e.WriteNote(ctx, engine.NewNote{Agent: "a", Content: "deploy with token " + enginetest.GHSecret + " today"})
	if err != nil || res2.ID != res.ID || res2.Created {
		t.Errorf("second write %+v %v", res2, err)
	}
	enginetest.AssertNotInDir(t, e.Dir(), enginetest.GHSecret)
}
