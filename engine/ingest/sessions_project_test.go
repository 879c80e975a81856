package ingest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// gitInit makes dir a git repository with one commit and returns it.
func gitInit(t testing.TB, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "root of " + filepath.Base(dir)},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dir
}

func TestProjectOf(t *testing.T) {
	repo := gitInit(t, filepath.Join(t.TempDir(), "billing service"))
	sub := filepath.Join(repo, "cmd", "api")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "notes")
	for _, c := range []struct{ dir, project, root string }{
		{repo, "billing-service", repo},
		{sub, "billing-service", repo},
		{plain, "notes", plain},
		{"/nowhere/on/this/machine/shop", "shop", "/nowhere/on/this/machine/shop"},
		{"relative/dir", "", ""},
		{"", "", ""},
	} {
		p, r := engine.ProjectOf(c.dir)
		if p != c.project || r != c.root {
			t.Errorf("ProjectOf(%q) = %q, %q; want %q, %q", c.dir, p, r, c.project, c.root)
		}
	}
}

// An imported session's chunks carry the project its working directory
// belongs to, so a project-scoped search finds them.
func TestImportedSessionsCarryTheirProject(t *testing.T) {
	ctx := context.Background()
	repo := gitInit(t, filepath.Join(t.TempDir(), "ledger"))
	sub := filepath.Join(repo, "internal")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	enginetest.WriteTranscript(t, dir, sub, "why does the reconciliation job double count refunds?", "The refund rows are joined twice; dedupe on refund_id.")
	enginetest.WriteTranscript(t, dir, "/srv/elsewhere/atlas", "how are map tiles cached?", "Tiles are cached per zoom level in the tile store.")
	e := enginetest.OpenIn(t, "", engine.Options{})
	rep, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: dir})
	if err != nil || rep.FilesFailed != 0 {
		t.Fatalf("import: %v %+v", err, rep)
	}
	for _, c := range []struct{ project, query, want string }{
		{"ledger", "refunds double count", "reconciliation"},
		{"ledger", "dedupe refund_id", "refund_id"},
		{"atlas", "map tiles cached", "tiles"},
	} {
		hits, err := e.Search(ctx, engine.SearchRequest{Query: c.query, Filter: engine.Filter{Project: c.project}, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || !strings.Contains(strings.ToLower(hits[0].Message.Content), c.want) {
			t.Errorf("search %q in project %s: %d hits, want one containing %q", c.query, c.project, len(hits), c.want)
			continue
		}
		for _, h := range hits {
			if h.Message.SenderProjectID != c.project || h.Message.ChannelID != engine.SessionChannel {
				t.Errorf("search in project %s returned #%d of project %q in %s", c.project, h.Message.ID, h.Message.SenderProjectID, h.Message.ChannelID)
			}
		}
	}
	// Scoped to the other project, nothing of ledger's session shows.
	hits, err := e.Search(ctx, engine.SearchRequest{Query: "refunds double count", Filter: engine.Filter{Project: "atlas"}, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if strings.Contains(h.Message.Content, "refund") {
			t.Errorf("project atlas search found ledger's #%d", h.Message.ID)
		}
	}
}

// Records that name no working directory take their session's: a summary
// record opening a file waits for the first record that names one, and a
// record without one after it takes the session's. A session whose
// records name none has no project: its chunks are found by searches not
// scoped to a project, in file order.
func TestImportedRecordsWithoutCWD(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	recs := []string{
		`{"type":"summary","summary":"Ledger summary: refunds reconciled","leafUuid":"a0000000-0000-4000-8000-000000000002"}`,
		`{"type":"user","uuid":"a0000000-0000-4000-8000-000000000001","sessionId":"3f1c2a9e-5b7d-4e21-9a0c-1d2e3f4a5b6c","cwd":"/srv/nowhere/ledger","timestamp":"2026-01-05T09:00:00.000Z","message":{"role":"user","content":"why do refunds double count?"}}`,
		`{"type":"assistant","uuid":"a0000000-0000-4000-8000-000000000002","parentUuid":"a0000000-0000-4000-8000-000000000001","sessionId":"3f1c2a9e-5b7d-4e21-9a0c-1d2e3f4a5b6c","timestamp":"2026-01-05T09:00:05.000Z","message":{"role":"assistant","content":[{"type":"text","text":"The refund rows are joined twice."}]}}`,
	}
	if err := os.WriteFile(filepath.Join(dir, "3f1c2a9e-5b7d-4e21-9a0c-1d2e3f4a5b6c.jsonl"), []byte(strings.Join(recs, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bare := `{"type":"user","uuid":"b0000000-0000-4000-8000-000000000001","sessionId":"7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d","timestamp":"2026-01-06T10:00:00.000Z","message":{"role":"user","content":"a prompt from nowhere"}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d.jsonl"), []byte(bare), 0o600); err != nil {
		t.Fatal(err)
	}
	e := enginetest.OpenIn(t, "", engine.Options{})
	rep, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: dir})
	if err != nil || rep.FilesFailed != 0 || rep.Chunks != 4 {
		t.Fatalf("import: %v %+v", err, rep)
	}
	ms, err := e.GetChannelMessages(ctx, engine.SessionChannel, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	project := map[string]string{}
	var ids []int64
	for _, m := range ms {
		project[m.Content] = m.SenderProjectID
		ids = append(ids, m.ID)
	}
	want := map[string]string{"Ledger summary: refunds reconciled": "ledger", "why do refunds double count?": "ledger",
		"The refund rows are joined twice.": "ledger", "a prompt from nowhere": ""}
	if !reflect.DeepEqual(project, want) {
		t.Errorf("projects %v, want %v", project, want)
	}
	summary, err := e.Search(ctx, engine.SearchRequest{Query: "summary reconciled", Mode: engine.ModeKeyword, Filter: engine.Filter{Project: "ledger"}})
	if err != nil || len(summary) != 1 || summary[0].Message.ID != 1 {
		t.Errorf("the summary (first in its file, so message 1) in project ledger: %+v %v (ids %v)", summary, err, ids)
	}
}
