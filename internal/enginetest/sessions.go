package enginetest

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine/claudecode/ccfixture"
	"github.com/cairn-dev/cairn/engine/redact"
)

// GHSecret is a fake GitHub token assembled from pieces.
const GHSecret = "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a"

// SharedInstruction is an instruction every session of SessionTree
// repeats.
const SharedInstruction = "Follow CLAUDE.md: run go test ./... before every commit and never push to main."

// SessionTree writes a Claude Code projects tree from seed: sessions of
// six turns with a compaction, a branch and a sidechain, holding GHSecret
// and SharedInstruction.
func SessionTree(t testing.TB, seed uint64) *ccfixture.Tree {
	t.Helper()
	tree, err := ccfixture.Write(t.TempDir(), ccfixture.Options{
		Rand: rand.New(rand.NewPCG(seed, seed)), Turns: 6, Compact: true, Branch: true, Sidechain: true,
		Secret: GHSecret, SharedInstruction: SharedInstruction,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// WriteTranscript writes a two-record Claude Code session that worked in
// cwd and returns its path.
func WriteTranscript(t testing.TB, dir, cwd, prompt, answer string) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(len(prompt)), uint64(len(answer))))
	session, user, assistant := ccfixture.UUID(rng), ccfixture.UUID(rng), ccfixture.UUID(rng)
	recs := []map[string]any{
		{"type": "user", "uuid": user, "sessionId": session, "cwd": cwd, "timestamp": "2026-01-05T09:00:00.000Z",
			"message": map[string]any{"role": "user", "content": prompt}},
		{"type": "assistant", "uuid": assistant, "parentUuid": user, "sessionId": session, "cwd": cwd, "timestamp": "2026-01-05T09:00:05.000Z",
			"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": answer}}}},
	}
	var b strings.Builder
	for _, r := range recs {
		line, _ := json.Marshal(r)
		b.Write(line)
		b.WriteByte('\n')
	}
	p := filepath.Join(dir, session+".jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// DefaultRedactor is redact's redactor with its default rules.
func DefaultRedactor(t testing.TB) *redact.Redactor {
	t.Helper()
	r, err := redact.New(redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// AppendFile appends s to the file at path.
func AppendFile(t testing.TB, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// AssertNotInDir fails the test if any file below dir contains s (or its
// lower-case form, as FTS5 stores terms).
func AssertNotInDir(t testing.TB, dir, s string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(s)) || bytes.Contains(b, []byte(strings.ToLower(s))) {
			t.Errorf("%s contains %q", p, s)
		}
		return nil
	})
}
