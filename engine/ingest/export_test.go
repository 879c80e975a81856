package ingest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestExportMessagesRoundTrip: the JSONL export of every channel imports
// into an empty store as the same channels (descriptions included) and the
// same messages (sender, project, content, type, confidence, metadata with
// breadcrumbs, creation time); imported again, everything is already there.
func TestExportMessagesRoundTrip(t *testing.T) {
	ctx := context.Background()
	src, clk := enginetest.Open(t, engine.Options{})
	clk.Set(time.Date(2026, 3, 4, 5, 6, 7, 891e6, time.UTC))
	if _, err := src.CreateChannel(ctx, engine.NewChannel{ID: "team/log", Name: "Team log", Description: "what the team did, <b>daily</b>", Project: "cairn"}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.CreateChannel(ctx, engine.NewChannel{ID: "empty", Description: "nothing yet"}); err != nil {
		t.Fatal(err)
	}
	enginetest.MustStore(t, src, engine.NewMessage{Channel: "team/log", Sender: "ann", Project: "cairn", Content: "deployed v1.2\n\nwith `code`", Type: "decision",
		Confidence: enginetest.Ptr(0.9), Metadata: json.RawMessage(`{"source":"ci","n":3}`), Breadcrumbs: engine.Breadcrumbs{Files: []string{"a.go"}, PRs: []string{"7"}}})
	clk.Set(time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC))
	enginetest.MustStore(t, src, engine.NewMessage{Channel: "team/log", Sender: "bob", Content: "second"})
	enginetest.MustNote(t, src, engine.NewNote{Agent: "claude", Project: "cairn", Content: "a note about WAL", Type: "pattern"})
	enginetest.MustStore(t, src, engine.NewMessage{Channel: "project:cairn:decisions", Sender: "claude", Content: "use SQLite", Type: "decision"})

	out := t.TempDir()
	files, err := ingest.ExportMessages(ctx, src, ingest.MessageExportOptions{OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 8 { // 4 channels x 2 formats
		t.Fatalf("exported %d files: %+v", len(files), files)
	}
	md, err := os.ReadFile(filepath.Join(out, ingest.MessagesDir, "team%2Flog.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Channel team/log", "what the team did, &lt;b&gt;daily&lt;/b&gt;", "· ann · decision ·", "with `code`"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}

	dst, dclk := enginetest.Open(t, engine.Options{})
	dclk.Set(time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC))
	for _, f := range files {
		if f.Format != ingest.FormatJSONL {
			continue
		}
		for pass := range 2 {
			r, err := os.Open(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := ingest.ImportMessages(ctx, dst, r, ingest.ImportMessagesOptions{})
			r.Close()
			if err != nil {
				t.Fatalf("import %s: %v (%+v)", f.Path, err, rep.Errors)
			}
			if pass == 1 && rep.Imported != 0 {
				t.Errorf("second import of %s imported %d", f.Path, rep.Imported)
			}
		}
	}
	for _, id := range []string{"team/log", "empty", "agent-notes:claude:cairn", "project:cairn:decisions"} {
		a, err := src.GetChannel(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		b, err := dst.GetChannel(ctx, id)
		if err != nil {
			t.Fatalf("channel %s not imported: %v", id, err)
		}
		if a.Name != b.Name || a.Description != b.Description || a.ProjectID != b.ProjectID || a.ChannelType != b.ChannelType || a.MessageCount != b.MessageCount {
			t.Errorf("channel %s:\n got %+v\nwant %+v", id, b, a)
		}
		am, _ := src.GetChannelMessages(ctx, id, 0, 100)
		bm, _ := dst.GetChannelMessages(ctx, id, 0, 100)
		if len(am) != len(bm) {
			t.Fatalf("channel %s: %d messages, want %d", id, len(bm), len(am))
		}
		for i := range am {
			x, y := am[i], bm[i]
			y.ID = x.ID
			xj, _ := json.Marshal(x)
			yj, _ := json.Marshal(y)
			if string(xj) != string(yj) {
				t.Errorf("message differs after the round trip:\n got %s\nwant %s", yj, xj)
			}
		}
	}
}

// TestImportFieldNames: the names of the CLI and MCP ("type", "channel",
// "sender", "project") are imported, and an unknown field makes its line
// invalid, named with the line number.
func TestImportFieldNames(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	in := `{"channel":"general","sender":"ann","project":"p","content":"x","type":"decision"}
{"channel":"general","sender":"ann","content":"y","typo":"decision","colour":1}
{"channel":"general","channel_id":"other","sender":"ann","content":"z"}
{"kind":"note","channel":"general","sender":"ann","content":"w"}
{"kind":"channel","id":"agent-notes:ann","description":"d"}
`
	rep, err := ingest.ImportMessages(ctx, e, strings.NewReader(in), ingest.ImportMessagesOptions{SkipInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Imported != 1 || rep.Invalid != 4 {
		t.Fatalf("report = %+v", rep)
	}
	wantErr := map[int]string{2: `unknown field "colour", "typo"`, 3: `"channel" and "channel_id" are the same field`, 4: `"kind" must be`, 5: "created on first write"}
	for _, le := range rep.Errors {
		if w := wantErr[le.Line]; w == "" || !strings.Contains(le.Err.Error(), w) {
			t.Errorf("line %d: %v, want %q", le.Line, le.Err, w)
		}
	}
	ms, err := e.GetChannelMessages(ctx, "general", 0, 10)
	if err != nil || len(ms) != 1 || ms[0].MessageType != "decision" || ms[0].SenderProjectID != "p" {
		t.Errorf("stored %+v, %v", ms, err)
	}
}
