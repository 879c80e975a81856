package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/pgtest"
)

// oldSessions are two Claude Code sessions in directories on no machine:
// one opening with a summary record (no cwd), one with an assistant
// record that names no cwd.
var oldSessions = map[string]string{
	"3f1c2a9e-5b7d-4e21-9a0c-1d2e3f4a5b6c.jsonl": `{"type":"summary","summary":"Invoice rounding fixed in the billing service","leafUuid":"a0000000-0000-4000-8000-000000000002"}
{"type":"user","uuid":"a0000000-0000-4000-8000-000000000001","sessionId":"3f1c2a9e-5b7d-4e21-9a0c-1d2e3f4a5b6c","cwd":"/nowhere/dev/billing-service","timestamp":"2026-01-05T09:00:00.000Z","message":{"role":"user","content":"why are invoice totals off by a cent?"}}
{"type":"assistant","uuid":"a0000000-0000-4000-8000-000000000002","parentUuid":"a0000000-0000-4000-8000-000000000001","sessionId":"3f1c2a9e-5b7d-4e21-9a0c-1d2e3f4a5b6c","cwd":"/nowhere/dev/billing-service","timestamp":"2026-01-05T09:00:05.000Z","message":{"role":"assistant","content":[{"type":"text","text":"The invoice totals round each line item before summing."}]}}
`,
	"7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d.jsonl": `{"type":"user","uuid":"b0000000-0000-4000-8000-000000000001","sessionId":"7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d","cwd":"/nowhere/work/shop","timestamp":"2026-01-06T10:00:00.000Z","message":{"role":"user","content":"the checkout page times out under load"}}
{"type":"assistant","uuid":"b0000000-0000-4000-8000-000000000002","parentUuid":"b0000000-0000-4000-8000-000000000001","sessionId":"7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d","timestamp":"2026-01-06T10:00:09.000Z","message":{"role":"assistant","content":[{"type":"text","text":"The checkout handler holds a database lock while calling the payment gateway."}]}}
`,
}

// A database at format 8 whose session chunks were imported without their
// project (as cairn stored them before imports recorded it) migrates to
// format 9: every chunk gets the project of its record's working
// directory, else its session's; project-scoped searches find them; the
// agents' counts move to the projects and the projects' channels exist.
func TestSessionProjectsMigration(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for name, text := range oldSessions {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dsn := pgtest.Database(t)
	e := openPG(t, dsn, engine.Options{})
	if rep, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: root}); err != nil || rep.Chunks != 5 {
		t.Fatalf("import: %+v %v", rep, err)
	}
	e.Close()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// What an import before projects were recorded left, at format 8.
	for _, q := range []string{
		"UPDATE messages SET sender_project_id = ''",
		"DELETE FROM agents",
		"INSERT INTO agents (name, project_id, message_count, created_at, last_active) VALUES ('claude-code', '', 3, 1, 2), ('human', '', 2, 1, 2)",
		"DELETE FROM channels WHERE channel_type = 'project'",
		"UPDATE cairn_format SET version = 8",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	e = openPG(t, dsn, engine.Options{})
	for project, want := range map[string][]string{
		"billing-service": {"Invoice rounding fixed in the billing service", "The invoice totals round each line item before summing.", "why are invoice totals off by a cent?"},
		"shop":            {"The checkout handler holds a database lock while calling the payment gateway.", "the checkout page times out under load"},
	} {
		rs, err := e.Search(ctx, engine.SearchRequest{Filter: engine.Filter{Project: project}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rs {
			got = append(got, r.Message.Content)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("project %s lists %q, want %q", project, got, want)
		}
	}
	agents, err := e.ListAgents(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int64{}
	for _, a := range agents {
		count[a.Name+"/"+a.ProjectID] = a.MessageCount
	}
	want := map[string]int64{"claude-code/": 0, "claude-code/billing-service": 2, "claude-code/shop": 1, "human/": 0, "human/billing-service": 1, "human/shop": 1}
	if !reflect.DeepEqual(count, want) {
		t.Errorf("agents %v, want %v", count, want)
	}
	if _, err := e.GetChannel(ctx, engine.ProjectChannelID("billing-service", engine.ProjectChannelNames()[0])); err != nil {
		t.Errorf("project billing-service's channels: %v", err)
	}
	if rep, err := ops.Consistency(ctx, e); err != nil || !rep.OK() {
		t.Errorf("consistency after the migration: %+v %v", rep.Problems, err)
	}
}
