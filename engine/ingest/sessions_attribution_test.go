package ingest_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/claudecode/ccfixture"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestImportAttribution: imported turns belong to the agent (claude-code:
// assistant turns, tool results, Claude Code's own records) or to the
// person (HumanSender), carry role and model in their metadata, and date
// the agents by the transcript, not by the import.
func TestImportAttribution(t *testing.T) {
	ctx := context.Background()
	e, clock := enginetest.Open(t, engine.Options{})
	clock.Set(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	dir := filepath.Join(t.TempDir(), "-home-dev-app")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp.jsonl")
	sid, _, err := ccfixture.WriteSession(tmp, rand.New(rand.NewPCG(5, 5)), 6)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, sid+".jsonl")
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: path, HumanSender: "ana"}); err != nil {
		t.Fatal(err)
	}
	res, err := e.Search(ctx, engine.SearchRequest{Filter: engine.Filter{ChannelIDs: []string{engine.SessionChannel}}, Limit: 500, Mode: engine.ModeKeyword})
	if err != nil {
		t.Fatal(err)
	}
	bySender := map[string]int{}
	for _, r := range res {
		bySender[r.Message.SenderID]++
		var md struct{ Role, Model string }
		_ = json.Unmarshal(r.Message.Metadata, &md)
		switch {
		case r.Message.SenderID == "ana" && md.Role != "user":
			t.Errorf("person's chunk with role %q", md.Role)
		case md.Role == "assistant" && (r.Message.SenderID != engine.SessionAgent || md.Model == ""):
			t.Errorf("assistant chunk from %q with model %q", r.Message.SenderID, md.Model)
		}
	}
	if bySender["ana"] == 0 || bySender[engine.SessionAgent] == 0 || len(bySender) != 2 {
		t.Errorf("senders %v, want ana and %s only", bySender, engine.SessionAgent)
	}
	agents, err := e.ListAgents(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		if a.LastActive.After(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)) || a.CreatedAt.After(a.LastActive) {
			t.Errorf("%s: created %s, last active %s: want the transcript's times (January 2026)", a.Name, a.CreatedAt, a.LastActive)
		}
	}
	if _, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: path, HumanSender: "not a name"}); err == nil {
		t.Error("a malformed human_sender was accepted")
	}
}
