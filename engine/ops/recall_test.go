package ops_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

func openEngine(t *testing.T) *engine.Engine {
	t.Helper()
	eng, err := sqlite.OpenEngine(context.Background(), t.TempDir(), engine.Options{}, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := eng.Close(); err != nil {
			t.Error(err)
		}
	})
	return eng
}

func note(t *testing.T, eng *engine.Engine, project, typ, text string) int64 {
	t.Helper()
	res, err := eng.WriteNote(context.Background(), engine.NewNote{Agent: "ann", Project: project, Type: typ, Content: text})
	if err != nil {
		t.Fatal(err)
	}
	return res.ID
}

// TestForPrompt: the recall lists the project's matches one line each,
// within the budget, leaving out what the session was given and the
// same text stored twice.
func TestForPrompt(t *testing.T) {
	ctx := context.Background()
	eng := openEngine(t) // no embedder: the search runs by keyword
	a := note(t, eng, "shop", engine.TypeDecision, "Invoices are immutable; corrections are credit notes")
	note(t, eng, "shop", "", "Invoices are immutable; corrections are credit notes") // the same text by another channel's type
	b := note(t, eng, "shop", engine.TypePattern, "Invoice numbers restart every fiscal year")
	note(t, eng, "other", engine.TypeDecision, "Invoices in the other project are editable")
	for i := range 40 {
		note(t, eng, "shop", "", fmt.Sprintf("invoice export batch %d ran at night with a long report attached %s", i, strings.Repeat("x", 200)))
	}
	now := time.Now()
	got, err := ops.ForPrompt(ctx, eng, ops.PromptRecall{Prompt: "invoices immutable credit notes", Project: "shop", BudgetTokens: 1000, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.IDs) == 0 || got.IDs[0] != a || strings.Count(got.Text, "Invoices are immutable") != 1 || strings.Contains(got.Text, "other project") {
		t.Fatalf("recall %v:\n%s", got.IDs, got.Text)
	}
	if !strings.Contains(got.Text, fmt.Sprintf("- #%d (decision, 0m, ann) Invoices are immutable", a)) {
		t.Errorf("line format:\n%s", got.Text)
	}
	small, err := ops.ForPrompt(ctx, eng, ops.PromptRecall{Prompt: "invoice", Project: "shop", BudgetTokens: 100, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(small.Text) > 100*ops.BytesPerToken || len(small.IDs) == 0 {
		t.Errorf("budget 100 tokens gave %d bytes, %d lines", len(small.Text), len(small.IDs))
	}
	seen := map[int64]bool{a: true}
	next, err := ops.ForPrompt(ctx, eng, ops.PromptRecall{Prompt: "invoices immutable fiscal year", Project: "shop", BudgetTokens: 1000, Seen: func(id int64) bool { return seen[id] }, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range next.IDs {
		if id == a {
			t.Errorf("seen message recalled again: %v", next.IDs)
		}
	}
	if len(next.IDs) == 0 || !strings.Contains(next.Text, fmt.Sprintf("#%d ", b)) {
		t.Errorf("recall after seen: %v\n%s", next.IDs, next.Text)
	}
	if none, err := ops.ForPrompt(ctx, eng, ops.PromptRecall{Prompt: "zebra", Project: "shop", BudgetTokens: 1000, Now: now}); err != nil || none.Text != "" {
		t.Errorf("nothing found, yet recalled %q (%v)", none.Text, err)
	}
}

// TestSessionLog: a session's log round-trips, keeps at most
// SessionLogMaxIDs ids (the newest), is forgotten on request, and pruning
// removes old logs and nothing else.
func TestSessionLog(t *testing.T) {
	dir := t.TempDir()
	l := ops.OpenSessionLog(dir, "session/../1")
	for id := range int64(ops.SessionLogMaxIDs + 10) {
		l.Add(id + 1)
	}
	if err := l.Save(); err != nil {
		t.Fatal(err)
	}
	again := ops.OpenSessionLog(dir, "session/../1")
	if again.Has(1) || !again.Has(11) || !again.Has(ops.SessionLogMaxIDs+10) {
		t.Error("log does not keep the newest ids only")
	}
	if ops.OpenSessionLog(dir, "other").Has(11) {
		t.Error("another session sees this one's ids")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || strings.Contains(entries[0].Name(), "session") {
		t.Fatalf("log files: %v", entries)
	}
	if err := ops.ForgetSession(dir, "session/../1"); err != nil {
		t.Fatal(err)
	}
	if ops.OpenSessionLog(dir, "session/../1").Has(11) {
		t.Error("forgotten session still has its ids")
	}

	// Pruning: a log last written before SessionLogMaxAge goes; a fresh
	// one and files that are not logs stay.
	for _, id := range []string{"old", "fresh"} {
		l := ops.OpenSessionLog(dir, id)
		l.Add(1)
		if err := l.Save(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "keep.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-ops.SessionLogMaxAge - time.Hour)
	entries, _ = os.ReadDir(dir)
	for _, e := range entries {
		if err := os.Chtimes(filepath.Join(dir, e.Name()), past, past); err != nil {
			t.Fatal(err)
		}
	}
	if err := ops.OpenSessionLog(dir, "fresh").Save(); err != nil { // written again now
		t.Fatal(err)
	}
	if err := ops.PruneSessionLogs(dir, time.Now()); err != nil {
		t.Fatal(err)
	}
	if ops.OpenSessionLog(dir, "old").Has(1) || !ops.OpenSessionLog(dir, "fresh").Has(1) {
		t.Error("pruning removed the wrong logs")
	}
	if _, err := os.Stat(filepath.Join(dir, "keep.txt")); err != nil {
		t.Error("pruning removed a file that is not a log")
	}
}
