package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/claudecode"
	"github.com/cairn-dev/cairn/engine/claudecode/ccfixture"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

func TestImportClaudeCode(t *testing.T) {
	ctx := context.Background()
	tree := enginetest.SessionTree(t, 7)
	e := enginetest.OpenIn(t, "", engine.Options{})
	rep, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: tree.Root, Redactor: enginetest.DefaultRedactor(t)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added != tree.Records() || rep.FilesFailed != 0 || len(rep.Files) != 9 {
		t.Fatalf("import: added %d of %d records, %d files, %d failed: %+v", rep.Added, tree.Records(), len(rep.Files), rep.FilesFailed, rep)
	}
	if rep.Redactions["github-pat"] == 0 {
		t.Errorf("redactions = %v, want the fixture's token redacted", rep.Redactions)
	}
	// The shared instruction (and "Understood.") recur in all 6 sessions:
	// stored once, referenced six times.
	if rep.ContentsShared < 10 {
		t.Errorf("contents shared = %d, want >= 10 (repeated instructions stored once)", rep.ContentsShared)
	}
	sessions, err := ingest.ListSessions(ctx, e)
	if err != nil || len(sessions) != len(tree.Sessions) {
		t.Fatalf("Sessions().List = %d sessions (%v), want %d", len(sessions), err, len(tree.Sessions))
	}
	for _, s := range tree.Sessions {
		recs, err := ingest.SessionRecords(ctx, e, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != s.Records {
			t.Errorf("session %s: %d records, want %d", s.ID, len(recs), s.Records)
		}
		var uuids []string
		for i, r := range recs {
			if r.Seq != i+1 {
				t.Fatalf("session %s: record %d has seq %d", s.ID, i, r.Seq)
			}
			if r.UUID != "" {
				uuids = append(uuids, r.UUID)
			}
		}
		if strings.Join(uuids, ",") != strings.Join(s.Messages, ",") {
			t.Errorf("session %s: records out of file order", s.ID)
		}
	}

	// A search hit is a chunk; it points back to every session holding it.
	hits, err := e.Search(ctx, engine.SearchRequest{Query: "CLAUDE.md commit push", Filter: engine.Filter{ChannelIDs: []string{engine.SessionChannel}}, Limit: 5})
	if err != nil || len(hits) == 0 {
		t.Fatalf("search: %v, %d hits", err, len(hits))
	}
	refs, err := ingest.SessionRefs(ctx, e, hits[0].Message.ID)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range refs {
		seen[r.SessionID] = true
	}
	if len(seen) != len(tree.Sessions) {
		t.Errorf("shared instruction chunk refers to %d sessions, want %d (%+v)", len(seen), len(tree.Sessions), refs)
	}

	// Idempotent: a second import adds nothing and reads nothing again.
	rep2, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: tree.Root, Redactor: enginetest.DefaultRedactor(t)})
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Added != 0 || rep2.Chunks != 0 {
		t.Errorf("re-import added %d records, %d chunks", rep2.Added, rep2.Chunks)
	}
	for _, f := range rep2.Files {
		if !f.Unchanged {
			t.Errorf("re-import: %s not recognised as unchanged", f.Path)
		}
	}

	// The redacted token is in no file of the data dir.
	enginetest.AssertNotInDir(t, e.Dir(), enginetest.GHSecret)
}

func TestImportGrowingSession(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	proj := filepath.Join(dir, "-home-dev-src-app")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(proj, "s.jsonl")
	sid, n, err := ccfixture.WriteSession(path, rand.New(rand.NewPCG(3, 3)), 5)
	if err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(proj, sid+".jsonl")
	if err := os.Rename(path, final); err != nil {
		t.Fatal(err)
	}
	e := enginetest.OpenIn(t, "", engine.Options{})
	rep, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: dir})
	if err != nil || rep.Added != n {
		t.Fatalf("first import: %v, added %d want %d", err, rep.Added, n)
	}
	// Claude Code appends one record and is half-way through the next.
	line := func(uuid, parent, text string) string {
		return `{"type":"user","uuid":"` + uuid + `","parentUuid":"` + parent + `","sessionId":"` + sid + `","timestamp":"2026-01-06T10:00:00.000Z","message":{"role":"user","content":"` + text + `"}}` + "\n"
	}
	u1, u2 := "aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002"
	l1, l2 := line(u1, "", "one more thing about the deploy"), line(u2, u1, "and the rollback")
	enginetest.AppendFile(t, final, l1+l2[:25])
	rep, err = ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: dir})
	if err != nil || rep.Added != 1 || !rep.Files[0].Resumed || rep.Files[0].Skipped[claudecode.ReasonTruncated] != 1 {
		t.Fatalf("grown import: %v %+v", err, rep)
	}
	enginetest.AppendFile(t, final, l2[25:])
	rep, err = ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: dir})
	if err != nil || rep.Added != 1 || rep.Skipped != 0 {
		t.Fatalf("completed line: %v %+v", err, rep)
	}
	recs, err := ingest.SessionRecords(ctx, e, sid)
	if err != nil || len(recs) != n+2 || recs[n+1].UUID != u2 || recs[n+1].ParentUUID != u1 {
		t.Fatalf("records after growth: %d (%v)", len(recs), err)
	}
	// A file replaced by different content is read from the start again;
	// known records are recognised and not duplicated.
	data, _ := os.ReadFile(final)
	if err := os.WriteFile(final, append([]byte(line("bbbbbbbb-0000-4000-8000-000000000003", "", "rewritten head")), data...), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err = ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: dir})
	if err != nil || rep.Added != 1 || rep.Known != n+2 || rep.Files[0].Resumed {
		t.Fatalf("rewritten file: %v %+v", err, rep)
	}
}

func TestImportBadFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	proj := filepath.Join(dir, "p")
	os.MkdirAll(proj, 0o755)
	sid := "cccccccc-0000-4000-8000-000000000001"
	good := `{"type":"user","uuid":"cccccccc-0000-4000-8000-00000000000a","parentUuid":null,"sessionId":"` + sid + `","timestamp":"2026-01-06T10:00:00.000Z","message":{"role":"user","content":"short"}}`
	bad := strings.Join([]string{
		"{broken",
		`{"type":"hologram","uuid":"x"}`,
		`{"type":"file-history-snapshot","snapshot":{}}`,
		"\xff\xfe",
		good,
	}, "\n") + "\n" + `{"type":"user","uuid":"cccc`
	os.WriteFile(filepath.Join(proj, sid+".jsonl"), []byte(bad), 0o600)
	// A second file whose long message cannot be stored (content limit) is
	// rolled back as a whole.
	sid2 := "dddddddd-0000-4000-8000-000000000001"
	long := strings.Replace(strings.ReplaceAll(good, sid, sid2), "short", strings.Repeat("word ", 400), 1)
	first := strings.ReplaceAll(strings.ReplaceAll(good, sid, sid2), "00000000000a", "00000000000b")
	os.WriteFile(filepath.Join(proj, sid2+".jsonl"), []byte(first+"\n"+long+"\n"), 0o600)

	e := enginetest.OpenIn(t, "", engine.Options{MaxContentBytes: 200})
	rep, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added != 1 || rep.FilesFailed != 1 {
		t.Fatalf("report %+v", rep)
	}
	var f1, f2 ingest.FileReport
	for _, f := range rep.Files {
		if strings.Contains(f.Path, sid) {
			f1 = f
		} else {
			f2 = f
		}
	}
	want := map[claudecode.Reason]int{claudecode.ReasonMalformed: 1, claudecode.ReasonUnknownType: 1, claudecode.ReasonNoContent: 1, claudecode.ReasonInvalidUTF8: 1, claudecode.ReasonTruncated: 1}
	for k, v := range want {
		if f1.Skipped[k] != v {
			t.Errorf("skipped[%s] = %d, want %d (%v)", k, f1.Skipped[k], v, f1.Skipped)
		}
	}
	if len(f1.Samples) != 5 || f1.Samples[0].Line != 1 {
		t.Errorf("samples %+v", f1.Samples)
	}
	if f2.Error == "" || f2.Added != 0 {
		t.Errorf("failing file: %+v", f2)
	}
	if _, err := ingest.GetSession(ctx, e, sid2); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("half-imported session %s: %v", sid2, err)
	}
}

func TestImportExclusion(t *testing.T) {
	ctx := context.Background()
	tree := enginetest.SessionTree(t, 11)
	e := enginetest.OpenIn(t, "", engine.Options{})
	ex := []string{tree.Sessions[0].Project, tree.Sessions[3].ID}
	rep, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: tree.Root, Exclude: ex})
	if err != nil {
		t.Fatal(err)
	}
	if rep.FilesExcluded != 4 { // project 0: 2 sessions + 1 agent file; the fourth session
		t.Errorf("files excluded = %d, want 4", rep.FilesExcluded)
	}
	for i, s := range tree.Sessions {
		_, err := ingest.GetSession(ctx, e, s.ID)
		if excluded := i < 2 || i == 3; excluded != errors.Is(err, engine.ErrNotFound) {
			t.Errorf("session %d excluded=%v, Sessions().Get err %v", i, excluded, err)
		}
	}
	if _, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: tree.Root, Exclude: []string{"[x"}}); err == nil {
		t.Error("bad glob accepted")
	}
}

func TestExportRoundTrip(t *testing.T) {
	ctx := context.Background()
	tree := enginetest.SessionTree(t, 5)
	e1 := enginetest.OpenIn(t, "", engine.Options{})
	if _, err := ingest.ImportSessions(ctx, e1, ingest.ImportSessionsOptions{Root: tree.Root, Redactor: enginetest.DefaultRedactor(t)}); err != nil {
		t.Fatal(err)
	}
	out1 := t.TempDir()
	files1, err := ingest.ExportSessions(ctx, e1, ingest.ExportSessionsOptions{All: true, OutDir: out1})
	if err != nil {
		t.Fatal(err)
	}
	if len(files1) != 2*len(tree.Sessions) {
		t.Fatalf("exported %d files", len(files1))
	}
	// Import the JSONL export into an empty store and export again.
	in := t.TempDir()
	for _, f := range files1 {
		if f.Format == ingest.FormatJSONL {
			b, _ := os.ReadFile(f.Path)
			os.WriteFile(filepath.Join(in, filepath.Base(f.Path)), b, 0o600)
		}
	}
	e2 := enginetest.OpenIn(t, "", engine.Options{})
	rep, err := ingest.ImportSessions(ctx, e2, ingest.ImportSessionsOptions{Root: in, Redactor: enginetest.DefaultRedactor(t)})
	if err != nil || rep.Skipped != 0 || rep.Added != tree.Records() {
		t.Fatalf("re-import of export: %v, %+v", err, rep)
	}
	out2 := t.TempDir()
	if _, err := ingest.ExportSessions(ctx, e2, ingest.ExportSessionsOptions{All: true, OutDir: out2, Formats: []string{ingest.FormatJSONL}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range tree.Sessions {
		a, _ := os.ReadFile(filepath.Join(out1, s.ID+".jsonl"))
		b, _ := os.ReadFile(filepath.Join(out2, s.ID+".jsonl"))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("session %s: JSONL differs after round trip (%d vs %d bytes)", s.ID, len(a), len(b))
		}
	}
	// Markdown for people.
	md, _ := os.ReadFile(filepath.Join(out1, tree.Sessions[0].ID+".md"))
	for _, want := range []string{"# Session " + tree.Sessions[0].ID, "## 1. User", "<details><summary>Tool call:", "```go\nfunc step", "<details><summary>Thinking</summary>", "[REDACTED:github-pat]", "Summary", "compacted context", "branch: replies to #"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if bytes.Contains(md, []byte(enginetest.GHSecret)) {
		t.Error("markdown contains the secret")
	}
	// Only the exported files are in the folder (no temp files left).
	ents, _ := os.ReadDir(out1)
	if len(ents) != len(files1) {
		t.Errorf("%d entries in the output folder, want %d", len(ents), len(files1))
	}
}

func TestExportRejectsBadIDs(t *testing.T) {
	ctx := context.Background()
	e := enginetest.OpenIn(t, "", engine.Options{})
	out := t.TempDir()
	for _, id := range []string{"../../etc/passwd", "", "0a1b2c3d-0000-4000-8000-00000000000/", "x.jsonl"} {
		_, err := ingest.ExportSessions(ctx, e, ingest.ExportSessionsOptions{Sessions: []string{id}, OutDir: out})
		var inv *engine.InvalidError
		if !errors.As(err, &inv) {
			t.Errorf("export %q: %v, want InvalidError", id, err)
		}
	}
	_, err := ingest.ExportSessions(ctx, e, ingest.ExportSessionsOptions{Sessions: []string{"0a1b2c3d-0000-4000-8000-000000000000"}, OutDir: out})
	if !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	if _, err := ingest.ExportSessions(ctx, e, ingest.ExportSessionsOptions{Sessions: []string{"0a1b2c3d-0000-4000-8000-000000000000"}, OutDir: out, Formats: []string{"pdf"}}); err == nil {
		t.Error("bad format accepted")
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("files written: %v", ents)
	}
}

func writeBenchSession(b testing.TB, n int) (string, string) {
	dir := b.TempDir()
	proj := filepath.Join(dir, "-bench")
	os.MkdirAll(proj, 0o755)
	tmp := filepath.Join(proj, "tmp.jsonl")
	// n exchanges give more than n records; aim at n records.
	sid, _, err := ccfixture.WriteSession(tmp, rand.New(rand.NewPCG(9, 9)), n/3)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(proj, sid+".jsonl")); err != nil {
		b.Fatal(err)
	}
	return dir, sid
}

// BenchmarkSessionLoad measures loading a ~1,000-record session in order
// (the design's target is < 100 ms).
func BenchmarkSessionLoad(b *testing.B) {
	ctx := context.Background()
	dir, sid := writeBenchSession(b, 1000)
	e := enginetest.OpenIn(b, "", engine.Options{})
	rep, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: dir})
	if err != nil || rep.Added < 900 {
		b.Fatalf("import: %v %+v", err, rep)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var n int
	for b.Loop() {
		recs, err := ingest.SessionRecords(ctx, e, sid)
		if err != nil {
			b.Fatal(err)
		}
		n = len(recs)
	}
	b.ReportMetric(float64(n), "records")
}

func BenchmarkImport(b *testing.B) {
	ctx := context.Background()
	dir, _ := writeBenchSession(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		e := enginetest.OpenIn(b, "", engine.Options{})
		b.StartTimer()
		if _, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: dir, Redactor: enginetest.DefaultRedactor(b)}); err != nil {
			b.Fatal(err)
		}
	}
}
