package claudecode_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine/claudecode"
	"github.com/cairn-dev/cairn/engine/claudecode/ccfixture"
	"github.com/cairn-dev/cairn/engine/redact"
)

func readAll(t *testing.T, data []byte, opts claudecode.Options) ([]*claudecode.Record, *claudecode.Report) {
	t.Helper()
	var recs []*claudecode.Record
	rep, err := claudecode.Read(context.Background(), bytes.NewReader(data[opts.StartOffset:]), opts, func(r *claudecode.Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return recs, rep
}

const secret = "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a"

func TestFixtureTree(t *testing.T) {
	root := t.TempDir()
	tree, err := ccfixture.Write(root, ccfixture.Options{Rand: rand.New(rand.NewPCG(1, 2)), Compact: true, Branch: true, Sidechain: true, Secret: secret, SharedInstruction: "Follow CLAUDE.md."})
	if err != nil {
		t.Fatal(err)
	}
	files, excluded, err := claudecode.Discover(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if excluded != 0 || len(files) != 6+3 {
		t.Fatalf("Discover: %d files, %d excluded; want 9, 0", len(files), excluded)
	}
	red, err := redact.New(redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	perSession := map[string]int{}
	types := map[string]int{}
	var redactions redact.Report
	for _, f := range files {
		data, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		recs, rep := readAll(t, data, claudecode.Options{Redactor: red, DefaultSessionID: f.SessionID()})
		if rep.Skipped[claudecode.ReasonNoContent] > 1 || rep.Skipped[claudecode.ReasonMalformed] != 0 {
			t.Errorf("%s: skipped %v", f.Rel, rep)
		}
		if rep.EndOffset != int64(len(data)) {
			t.Errorf("%s: EndOffset %d, want %d", f.Rel, rep.EndOffset, len(data))
		}
		redactions.Add(rep.Redactions)
		for _, r := range recs {
			perSession[r.SessionID]++
			types[r.Type]++
			if bytes.Contains(r.JSON, []byte(secret)) {
				t.Errorf("secret survived redaction in %s line %d", f.Rel, r.Line)
			}
			if r.Type != "summary" && r.Timestamp.IsZero() {
				t.Errorf("%s line %d: no timestamp", f.Rel, r.Line)
			}
		}
	}
	for _, s := range tree.Sessions {
		if perSession[s.ID] != s.Records {
			t.Errorf("session %s: read %d records, fixture wrote %d", s.ID, perSession[s.ID], s.Records)
		}
	}
	if redactions.Counts["github-pat"] != 2 { // tool_result content and toolUseResult.stdout
		t.Errorf("redactions = %v, want github-pat=2", redactions)
	}
	for _, typ := range []string{"user", "assistant", "system", "summary"} {
		if types[typ] == 0 {
			t.Errorf("no %s records in the fixture", typ)
		}
	}
	// Exclusion globs.
	_, excluded, err = claudecode.Discover(root, []string{tree.Sessions[0].Project, "agent-*"})
	if err != nil || excluded != 2+3 {
		t.Errorf("Discover with exclusions: excluded %d (err %v), want 5", excluded, err)
	}
	if _, _, err := claudecode.Discover(root, []string{"[bad"}); err == nil {
		t.Error("malformed glob accepted")
	}
}

const (
	sid  = "0a1b2c3d-0000-4000-8000-000000000001"
	u1   = "11111111-1111-4111-8111-111111111111"
	u2   = "22222222-2222-4222-8222-222222222222"
	good = `{"type":"user","uuid":"` + u1 + `","parentUuid":null,"sessionId":"` + sid + `","timestamp":"2026-01-05T09:00:00.000Z","message":{"role":"user","content":"hello"}}`
)

func TestSkips(t *testing.T) {
	second := strings.ReplaceAll(good, u1, u2)
	tests := []struct {
		name   string
		data   string
		want   int
		reason claudecode.Reason
	}{
		{"ok", good + "\n", 1, ""},
		{"malformed", "{not json\n" + good + "\n", 1, claudecode.ReasonMalformed},
		{"array", "[1,2]\n" + good + "\n", 1, claudecode.ReasonMalformed},
		{"trailing garbage", good + "x\n", 0, claudecode.ReasonMalformed},
		{"invalid utf8", strings.Replace(good, "hello", "hel\xfflo", 1) + "\n" + second + "\n", 1, claudecode.ReasonInvalidUTF8},
		{"truncated", good + "\n" + second[:40], 1, claudecode.ReasonTruncated},
		{"unknown type", `{"type":"hologram","uuid":"` + u2 + `"}` + "\n" + good + "\n", 1, claudecode.ReasonUnknownType},
		{"no content type", `{"type":"file-history-snapshot","messageId":"x"}` + "\n" + good + "\n", 1, claudecode.ReasonNoContent},
		{"missing uuid", strings.Replace(good, `"uuid":"`+u1+`",`, "", 1) + "\n", 0, claudecode.ReasonMissing},
		{"missing type", strings.Replace(good, `"type":"user",`, "", 1) + "\n", 0, claudecode.ReasonMissing},
		{"bad uuid", strings.Replace(good, u1, "nope", 1) + "\n", 0, claudecode.ReasonBadField},
		{"bad session", strings.Replace(good, sid, "../../etc", 1) + "\n", 0, claudecode.ReasonBadField},
		{"bad timestamp", strings.Replace(good, "2026-01-05T09:00:00.000Z", "yesterday", 1) + "\n", 0, claudecode.ReasonBadField},
		{"bad content", strings.Replace(good, `"content":"hello"`, `"content":42`, 1) + "\n", 0, claudecode.ReasonBadField},
		{"blank line", "\n" + good + "\n", 1, claudecode.ReasonEmptyLine},
		{"crlf", good + "\r\n", 1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, rep := readAll(t, []byte(tc.data), claudecode.Options{})
			if len(recs) != tc.want {
				t.Errorf("records = %d, want %d (report %v)", len(recs), tc.want, rep)
			}
			if tc.reason == "" {
				if rep.SkippedTotal() != 0 {
					t.Errorf("skipped %v", rep)
				}
				return
			}
			if rep.Skipped[tc.reason] != 1 || len(rep.Samples) != 1 || rep.Samples[0].Reason != tc.reason {
				t.Errorf("report %v samples %+v, want one %s", rep, rep.Samples, tc.reason)
			}
		})
	}
}

func TestHugeLineAndResume(t *testing.T) {
	huge := strings.Replace(good, "hello", strings.Repeat("x", 5000), 1)
	second := strings.ReplaceAll(good, u1, u2)
	data := []byte(good + "\n" + huge + "\n" + second[:30])
	recs, rep := readAll(t, data, claudecode.Options{MaxLineBytes: 1000})
	if len(recs) != 1 || rep.Skipped[claudecode.ReasonTooLong] != 1 || rep.Skipped[claudecode.ReasonTruncated] != 1 {
		t.Fatalf("records %d, report %v", len(recs), rep)
	}
	if rep.EndOffset != int64(len(good)+1+len(huge)+1) {
		t.Fatalf("EndOffset %d", rep.EndOffset)
	}
	// The writer finishes the line; reading resumes at EndOffset.
	data = append(data[:rep.EndOffset], []byte(second+"\n")...)
	recs, rep2 := readAll(t, data, claudecode.Options{StartOffset: rep.EndOffset, StartLine: 2})
	if len(recs) != 1 || recs[0].UUID != u2 || recs[0].Line != 3 || rep2.SkippedTotal() != 0 {
		t.Fatalf("resume: %d records %+v, report %v", len(recs), recs, rep2)
	}
}

func TestRecordFields(t *testing.T) {
	line := `{"parentUuid":"` + u1 + `","isSidechain":true,"sessionId":"` + sid + `","type":"assistant","uuid":"` + u2 + `","timestamp":"2026-01-05T09:00:01.250Z","message":{"role":"assistant","model":"m","content":[{"type":"thinking","thinking":"hmm","signature":"s"},{"type":"text","text":"Run it <now> & see"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"z":1,"a":"ls"}}]},"usage":{"input_tokens":1.50}}`
	recs, _ := readAll(t, []byte(line+"\n"), claudecode.Options{})
	if len(recs) != 1 {
		t.Fatal("no record")
	}
	r := recs[0]
	if r.ParentUUID != u1 || !r.IsSidechain || r.Role != "assistant" || r.Timestamp.UnixMilli()%1000 != 250 || len(r.Blocks) != 3 {
		t.Fatalf("record %+v", r)
	}
	if got, want := r.Text(), "hmm\n\nRun it <now> & see\n\ntool Bash: {\"a\":\"ls\",\"z\":1}"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	env, content, err := claudecode.SplitContent(r.JSON)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(env, []byte("thinking")) || !bytes.Contains(content, []byte("<now> & see")) || !bytes.Contains(env, []byte("1.50")) {
		t.Errorf("split: env %s content %s", env, content)
	}
	joined, err := claudecode.JoinContent(env, content)
	if err != nil || !bytes.Equal(joined, r.JSON) {
		t.Errorf("join = %s (%v), want %s", joined, err, r.JSON)
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(good + "\n"))
	f.Add([]byte(`{"type":"summary","summary":"s","leafUuid":"` + u1 + `"}` + "\n"))
	f.Add([]byte("{\"type\":\"user\"\n\xff\n"))
	f.Add([]byte(strings.Replace(good, `"content":"hello"`, `"content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"}]}]`, 1) + "\n"))
	red, err := redact.New(redact.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := claudecode.Read(context.Background(), bytes.NewReader(data), claudecode.Options{Redactor: red, MaxLineBytes: 4096, DefaultSessionID: sid}, func(r *claudecode.Record) error {
			env, content, err := claudecode.SplitContent(r.JSON)
			if err != nil {
				t.Fatalf("split of an accepted record: %v", err)
			}
			joined, err := claudecode.JoinContent(env, content)
			if err != nil || !bytes.Equal(joined, r.JSON) {
				t.Fatalf("join(split(x)) = %s, %v; want %s", joined, err, r.JSON)
			}
			again, err := claudecode.Canonical(r.JSON)
			if err != nil || !bytes.Equal(again, r.JSON) {
				t.Fatalf("canonical form not stable: %s vs %s", again, r.JSON)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Read error: %v", err)
		}
		if rep.Records+rep.SkippedTotal() != rep.Lines {
			t.Fatalf("lines %d != records %d + skipped %d", rep.Lines, rep.Records, rep.SkippedTotal())
		}
		if rep.EndOffset > int64(len(data)) {
			t.Fatalf("EndOffset %d beyond %d", rep.EndOffset, len(data))
		}
	})
}

func TestDefaultRoot(t *testing.T) {
	env := map[string]string{"HOME": "/home/u"}
	got, err := claudecode.DefaultRoot(func(k string) string { return env[k] })
	if err != nil || got != filepath.Join("/home/u", ".claude", "projects") {
		t.Errorf("DefaultRoot = %q, %v", got, err)
	}
	env["CLAUDE_CONFIG_DIR"] = "/cfg"
	if got, _ := claudecode.DefaultRoot(func(k string) string { return env[k] }); got != filepath.Join("/cfg", "projects") {
		t.Errorf("DefaultRoot with CLAUDE_CONFIG_DIR = %q", got)
	}
}
