package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/search"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// A store of three notes, as a new user tries it, with the built-in
// model: every note embedded by the one-shot writes.
func threeNotes(t *testing.T) func(string) string {
	t.Helper()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": t.TempDir(), "CAIRN_BREADCRUMBS_REPO": t.TempDir()})
	for _, note := range []string{"hello", "a naïve implementation of the retry loop", "deploys run on fridays"} {
		if _, errOut, code := runCLI(t, getenv, "", "note", "--agent", "ann", note); code != 0 {
			t.Fatalf("note %q: exit %d %q", note, code, errOut)
		}
	}
	return getenv
}

// searchJSON runs cairn search --json with args and returns the results.
func searchJSON(t *testing.T, getenv func(string) string, args ...string) []searchLine {
	t.Helper()
	out, errOut, code := runCLI(t, getenv, "", append([]string{"search", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("search %q: exit %d %q", args, code, errOut)
	}
	var lines []searchLine
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var r searchLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("search %q: %v in %q", args, err, l)
		}
		lines = append(lines, r)
	}
	return lines
}

// The note that holds the query's rare word ranks first, above a note
// whose meaning is merely less far, in every mode that reads keywords.
func TestSearchRareWordRanksItsNoteFirst(t *testing.T) {
	getenv := threeNotes(t)
	for _, mode := range []string{"hybrid", "keyword"} {
		res := searchJSON(t, getenv, "--mode", mode, "naïve")
		if len(res) == 0 || !strings.Contains(res[0].Content, "naïve") {
			t.Fatalf("%s: %+v, want the naïve note first", mode, res)
		}
		if s := res[0].Scores; res[0].Score != s.Final || s.Keyword <= 0 || s.Fused <= 0 || s.Fused > 1 {
			t.Errorf("%s: scores %+v", mode, s)
		}
	}
}

// A query nothing in the store answers returns nothing by default, and the
// CLI says so (exit 0) with the way to see every result.
func TestSearchUnrelatedQueryReturnsNothing(t *testing.T) {
	getenv := threeNotes(t)
	const q = "quantum chromodynamics lattice"
	for _, mode := range []string{"hybrid", "semantic", "keyword"} {
		if res := searchJSON(t, getenv, "--mode", mode, q); len(res) != 0 {
			t.Errorf("%s: %d results, want none: %+v", mode, len(res), res)
		}
	}
	out, errOut, code := runCLI(t, getenv, "", "search", q)
	if code != 0 || strings.TrimSpace(out) != "no relevant results" || !strings.Contains(errOut, "--min-score 0") || !strings.Contains(errOut, "--all") {
		t.Fatalf("search: exit %d %q %q", code, out, errOut)
	}
	// Asked for everything, it ranks everything, each below the floor.
	for _, args := range [][]string{{"--all", q}, {"--min-score", "0", q}} {
		res := searchJSON(t, getenv, args...)
		if len(res) != 3 {
			t.Fatalf("%q: %d results, want 3", args, len(res))
		}
		for _, r := range res {
			if r.Score >= search.DefaultFloor {
				t.Errorf("%q: %q scores %v", args, r.Content, r.Score)
			}
		}
	}
	// A listing has no floor.
	if res := searchJSON(t, getenv, "--sender", "ann"); len(res) != 3 {
		t.Errorf("listing: %d results, want 3", len(res))
	}
	// Bad floors are refused, naming the field.
	for _, args := range [][]string{{"--min-score", "1.5", q}, {"--min-score", "-0.1", q}, {"--all", "--min-score", "0.3", q}} {
		if _, errOut, code := runCLI(t, getenv, "", append([]string{"search"}, args...)...); code != 2 || !strings.Contains(errOut, "min_score") {
			t.Errorf("%q: exit %d %q, want 2 naming min_score", args, code, errOut)
		}
	}
}

// A message imported but not embedded yet is ranked on its keyword
// evidence: with the query's words it comes first in hybrid search, above
// embedded notes, and says it has no vector.
func TestSearchNotEmbeddedMessageRanksOnKeywords(t *testing.T) {
	getenv := threeNotes(t)
	ctx := context.Background()
	// Written by a process without a model, as an import or a hook
	// writes before serve or mcp embeds.
	eng, err := sqlite.OpenEngine(ctx, getenv("CAIRN_DATA_DIR"), engine.Options{}, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const chunk = "session chunk: the flaky retry loop in the uploader backs off exponentially after a timeout"
	if _, err := eng.StoreMessages(ctx, []engine.NewMessage{{Channel: "agent-notes:ann", Sender: "ann", Content: chunk}}); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	res := searchJSON(t, getenv, "uploader retry timeout")
	if len(res) == 0 || res[0].Content != chunk || !res[0].VectorMissing {
		t.Fatalf("hybrid: %+v, want the unembedded chunk first, vector_missing", res)
	}
	if s := res[0].Scores; s.Similarity != 0 || s.Keyword <= 0 {
		t.Errorf("scores %+v", s)
	}
}
