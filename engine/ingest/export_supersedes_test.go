package ingest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// correctionChain writes into e a note corrected twice in its channel and
// a team-log message corrected by a note of another channel; it returns
// the ids in that order: old, fix, fix2, window, window2.
func correctionChain(t *testing.T, e *engine.Engine) []int64 {
	t.Helper()
	old := enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: "the deploy script lives in tools/deploy.sh"})
	fix := enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: "the deploy script moved to bin/deploy.sh", Supersedes: old})
	fix2 := enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: "the deploy script moved to scripts/deploy.sh", Supersedes: fix})
	window := enginetest.MustStore(t, e, engine.NewMessage{Channel: "team-log", Sender: "ann", Content: "the release window is Tuesday"})
	window2 := enginetest.MustNote(t, e, engine.NewNote{Agent: "claude", Project: "cairn", Content: "the release window moved to Wednesday", Supersedes: window})
	return []int64{old, fix, fix2, window, window2}
}

// importFiles imports the JSONL files among files, in that order.
func importFiles(t *testing.T, e *engine.Engine, files []string) ingest.ImportMessagesReport {
	t.Helper()
	var sum ingest.ImportMessagesReport
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := ingest.ImportMessages(context.Background(), e, f, ingest.ImportMessagesOptions{})
		f.Close()
		if err != nil {
			t.Fatalf("import %s: %v (%+v)", path, err, rep)
		}
		sum.Imported += rep.Imported
		sum.AlreadyStored += rep.AlreadyStored
		sum.LinksRestored += rep.LinksRestored
		sum.LinksDropped += rep.LinksDropped
		sum.Dropped = append(sum.Dropped, rep.Dropped...)
	}
	return sum
}

// TestExportImportKeepsSupersedes: an export of a store with corrections
// (a chain in one channel, one across channels) imports into a fresh
// store with every link: the superseded messages stay out of search and
// name their replacement. Imported again, nothing is stored or dropped.
// A correction imported before the message it supersedes is stored
// unlinked and reported, and the import goes on.
func TestExportImportKeepsSupersedes(t *testing.T) {
	ctx := context.Background()
	src, _ := enginetest.Open(t, engine.Options{})
	correctionChain(t, src)
	out := t.TempDir()
	exported, err := ingest.ExportMessages(ctx, src, ingest.MessageExportOptions{OutDir: out, Formats: []string{ingest.FormatJSONL}})
	if err != nil {
		t.Fatal(err)
	}
	fileOf := map[string]string{}
	for _, f := range exported {
		fileOf[f.Channel] = f.Path
	}
	inOrder := []string{fileOf["agent-notes:bob"], fileOf["team-log"], fileOf["agent-notes:claude:cairn"]}

	dst, _ := enginetest.Open(t, engine.Options{})
	rep := importFiles(t, dst, inOrder)
	if rep.Imported != 5 || rep.LinksRestored != 3 || rep.LinksDropped != 0 {
		t.Fatalf("import: %+v", rep)
	}
	checkChain(t, dst)
	again := importFiles(t, dst, inOrder)
	if again.Imported != 0 || again.AlreadyStored != 5 || again.LinksRestored != 0 || again.LinksDropped != 0 {
		t.Fatalf("second import: %+v", again)
	}

	// The cross-channel correction first: stored current, its link
	// reported; the rest of its file and of the others is imported.
	early, _ := enginetest.Open(t, engine.Options{})
	rep = importFiles(t, early, []string{fileOf["agent-notes:claude:cairn"], fileOf["agent-notes:bob"], fileOf["team-log"]})
	if rep.Imported != 5 || rep.LinksRestored != 2 || rep.LinksDropped != 1 || len(rep.Dropped) != 1 ||
		!strings.Contains(rep.Dropped[0].Error(), "is not in this store; import its channel first") {
		t.Fatalf("import out of order: %+v %v", rep, rep.Dropped)
	}
	got := keywordIDs(t, early, "release window")
	if len(got) != 2 {
		t.Fatalf("release window: %v, want both messages current", got)
	}
}

// checkChain checks what correctionChain wrote, as an import restored it
// into e (its own ids).
func checkChain(t *testing.T, e *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	byContent := map[string]engine.Message{}
	for _, ch := range []string{"agent-notes:bob", "team-log", "agent-notes:claude:cairn"} {
		ms, err := e.GetChannelMessages(ctx, ch, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			byContent[m.Content] = m
		}
	}
	old, fix, fix2 := byContent["the deploy script lives in tools/deploy.sh"], byContent["the deploy script moved to bin/deploy.sh"], byContent["the deploy script moved to scripts/deploy.sh"]
	window, window2 := byContent["the release window is Tuesday"], byContent["the release window moved to Wednesday"]
	for _, c := range []struct {
		name    string
		m       engine.Message
		sup, by int64
	}{{"old", old, 0, fix.ID}, {"fix", fix, old.ID, fix2.ID}, {"fix2", fix2, fix.ID, 0}, {"window", window, 0, window2.ID}, {"window2", window2, window.ID, 0}} {
		m, err := e.GetMessage(ctx, c.m.ID)
		if err != nil || c.m.ID == 0 || m.Supersedes != c.sup || m.SupersededBy != c.by {
			t.Errorf("%s (id %d): supersedes %d superseded_by %d (%v), want %d and %d", c.name, c.m.ID, m.Supersedes, m.SupersededBy, err, c.sup, c.by)
		}
	}
	if got := keywordIDs(t, e, "deploy script"); !slices.Equal(got, []int64{fix2.ID}) {
		t.Errorf("deploy script: %v, want only %d", got, fix2.ID)
	}
	if got := keywordIDs(t, e, "release window"); !slices.Equal(got, []int64{window2.ID}) {
		t.Errorf("release window: %v, want only %d", got, window2.ID)
	}
}

func keywordIDs(t *testing.T, e *engine.Engine, q string) []int64 {
	t.Helper()
	rs, err := e.Search(context.Background(), engine.SearchRequest{Query: q, Mode: engine.ModeKeyword})
	if err != nil {
		t.Fatal(err)
	}
	out := enginetest.ResultIDs(rs)
	slices.Sort(out)
	return out
}

// TestImportExportFormat1: an export written before exports carried
// supersedes links (testdata/export-v1: format 1, no header; a correction
// across channels, unlinked there) imports every message as current.
// Keep this test forever.
func TestImportExportFormat1(t *testing.T) {
	e, clk := enginetest.Open(t, engine.Options{})
	clk.Set(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) // after the export's times
	dir := filepath.Join("testdata", "export-v1", ingest.MessagesDir)
	rep := importFiles(t, e, []string{filepath.Join(dir, "team-log.jsonl"), filepath.Join(dir, "agent-notes%3Aclaude%3Acairn.jsonl")})
	if rep.Imported != 4 || rep.LinksRestored != 0 || rep.LinksDropped != 0 {
		t.Fatalf("import: %+v", rep)
	}
	ch, err := e.GetChannel(context.Background(), "team-log")
	if err != nil || ch.Description != "what the team decided" || ch.MessageCount != 3 {
		t.Fatalf("team-log: %+v %v", ch, err)
	}
	if got := keywordIDs(t, e, "script"); len(got) != 2 {
		t.Fatalf("deploy script: %v, want both versions current", got)
	}
}

// TestImportNewerExportFormat: an export header of a format this cairn
// does not know imports nothing, with ErrIncompatibleFormat naming the
// line; a malformed header or reference is an invalid line.
func TestImportNewerExportFormat(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	newer := `{"kind":"export","format":99}
{"channel":"general","sender":"ann","content":"from the future"}
`
	_, err := ingest.ImportMessages(ctx, e, strings.NewReader(newer), ingest.ImportMessagesOptions{SkipInvalid: true})
	if !errors.Is(err, engine.ErrIncompatibleFormat) || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), "format 99") {
		t.Fatalf("newer format: %v", err)
	}
	if n := enginetest.CountMessages(t, e); n != 0 {
		t.Fatalf("%d messages stored from a newer export", n)
	}
	bad := `{"kind":"export","format":"two"}
{"kind":"export","format":2,"extra":1}
{"channel":"general","sender":"ann","content":"x","supersedes_ref":{"channel_id":"general","sender_id":"ann","content_hash":"abc","created_at":"2026-01-01T00:00:00Z"}}
{"channel":"general","sender":"ann","content":"y","supersedes_ref":{"channel_id":"general","sender_id":"ann","content_hash":"` + strings.Repeat("a", 64) + `","created_at":"2026-01-01T00:00:00Z","id":3}}
{"channel":"general","sender":"ann","content":"z","supersedes_ref":{"channel_id":"general","content_hash":"` + strings.Repeat("a", 64) + `","created_at":"2026-01-01T00:00:00Z"}}
`
	rep, err := ingest.ImportMessages(ctx, e, strings.NewReader(bad), ingest.ImportMessagesOptions{SkipInvalid: true})
	if err != nil || rep.Invalid != 5 {
		t.Fatalf("malformed headers and references: %+v %v", rep, err)
	}
	want := []string{`"format" must be a whole number`, `unknown field "extra"`, "64 lower-case hex digits", `unknown field "id"`, `needs "channel_id" and "sender_id"`}
	for i, le := range rep.Errors {
		if !strings.Contains(le.Err.Error(), want[i]) {
			t.Errorf("line %d: %v, want %q", le.Line, le.Err, want[i])
		}
	}
}
