package engine_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// corpus writes a small fixed corpus and returns the ids by label.
func corpus(t testing.TB, e *engine.Engine) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: "general"}); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
	docs := []struct {
		label string
		m     engine.NewMessage
	}{
		{"wal", engine.NewMessage{Channel: "general", Sender: "alice", Project: "cairn", Content: "SQLite WAL mode lets readers run while a writer commits.", Confidence: enginetest.Ptr(0.9), Type: "decision"}},
		{"wal2", engine.NewMessage{Channel: "general", Sender: "bob", Project: "web", Content: "WAL WAL WAL: write-ahead logging, the WAL file grows until a checkpoint.", Confidence: enginetest.Ptr(0.4)}},
		{"journal", engine.NewMessage{Channel: "agent-notes:alice:cairn", Sender: "alice", Project: "cairn", Content: "Journaling modes: rollback journal versus write-ahead log.", Confidence: enginetest.Ptr(0.7), Type: "reflection"}},
		{"ops", engine.NewMessage{Channel: "agent-notes:bob", Sender: "bob", Content: "NOT (a AND b) OR c NEAR d* col:x ^start \"quoted\"", Confidence: enginetest.Ptr(0.5), Type: "pattern"}},
		{"emoji", engine.NewMessage{Channel: "general", Sender: "carol", Content: "deploy 🚀 done, Grüße aus Köln, 東京 データベース", Confidence: enginetest.Ptr(0.6)}},
		{"policy", engine.NewMessage{Channel: "project:cairn:policies", Sender: "alice", Project: "cairn", Content: "Never store secrets in notes; the checkpoint runs nightly.", Confidence: enginetest.Ptr(1.0), Type: "policy"}},
	}
	out := map[string]int64{}
	for i, d := range docs {
		d.m.CreatedAt = base.Add(time.Duration(i) * time.Hour)
		out[d.label] = enginetest.MustStore(t, e, d.m)
	}
	return out
}

func TestKeywordSearchRanksAndMarks(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	id := corpus(t, e)
	rs, err := e.Search(ctx, engine.SearchRequest{Query: "wal"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := enginetest.ResultIDs(rs), []int64{id["wal2"], id["wal"]}; !reflect.DeepEqual(got, want) {
		t.Fatalf("wal: got %v, want %v (more occurrences first)", got, want)
	}
	if !(rs[0].Score > rs[1].Score && rs[1].Score > 0) || !(rs[0].KeywordScore > rs[1].KeywordScore) { // Score is the ranked final score, KeywordScore BM25
		t.Fatalf("scores not descending positive: %+v", rs)
	}
	if !strings.Contains(rs[1].Snippet, "**WAL**") {
		t.Fatalf("snippet %q does not mark the term", rs[1].Snippet)
	}
	if rs[1].Message.Content != "SQLite WAL mode lets readers run while a writer commits." {
		t.Fatalf("result does not carry the full message: %+v", rs[1].Message)
	}
	// Porter stemming: journaling ~ journal; several terms are ORed.
	rs, err = e.Search(ctx, engine.SearchRequest{Query: "journals checkpointing"})
	if err != nil {
		t.Fatal(err)
	}
	got := enginetest.ResultIDs(rs)
	slices.Sort(got)
	if want := []int64{id["wal2"], id["journal"], id["policy"]}; !reflect.DeepEqual(got, want) {
		t.Fatalf("journals checkpointing: got %v, want %v", got, want)
	}
	// Other scripts and emoji.
	for q, want := range map[string]int64{"köln": id["emoji"], "東京": id["emoji"], "GRÜSSE grüße": id["emoji"]} {
		rs, err := e.Search(ctx, engine.SearchRequest{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(enginetest.ResultIDs(rs), want) {
			t.Errorf("%q: got %v, want %d among them", q, enginetest.ResultIDs(rs), want)
		}
	}
	for _, q := range []string{"🚀", "   ", "!!! ??? ...", "\"\"", "()", "*", "^", ":"} {
		rs, err := e.Search(ctx, engine.SearchRequest{Query: q})
		if err != nil {
			t.Errorf("%q: %v", q, err)
		}
		if strings.TrimSpace(q) != "" && len(rs) != 0 {
			t.Errorf("%q (no terms): got %v, want nothing", q, enginetest.ResultIDs(rs))
		}
	}
}

func TestSearchSyntaxIsPlainText(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	id := corpus(t, e)
	// Each of these would be FTS5 syntax; here every word is a term.
	for _, q := range []string{`NOT`, `AND`, `OR`, `NEAR`, `col:x`, `"quoted`, `d*`, `^start`, `(a`, `NEAR(d c)`, `col : x`, `-a`, `+b`, `NOT wal`} {
		rs, err := e.Search(ctx, engine.SearchRequest{Query: q})
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if !slices.Contains(enginetest.ResultIDs(rs), id["ops"]) {
			t.Errorf("%q: got %v, want the message containing it (%d)", q, enginetest.ResultIDs(rs), id["ops"])
		}
	}
	// "NOT wal" must not exclude WAL messages: NOT is a plain word.
	rs, _ := e.Search(ctx, engine.SearchRequest{Query: "NOT wal"})
	if !slices.Contains(enginetest.ResultIDs(rs), id["wal"]) {
		t.Errorf("NOT wal: %v lacks %d", enginetest.ResultIDs(rs), id["wal"])
	}
}

func TestSearchFilters(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	id := corpus(t, e)
	base := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
	all := []string{"wal", "wal2", "journal", "ops", "emoji", "policy"}
	labels := func(ls ...string) []int64 {
		var out []int64
		for _, l := range ls {
			out = append(out, id[l])
		}
		slices.Sort(out)
		return out
	}
	cases := []struct {
		name   string
		filter engine.Filter
		want   []int64
	}{
		{"none", engine.Filter{}, labels(all...)},
		{"channel", engine.Filter{ChannelIDs: []string{"general"}}, labels("wal", "wal2", "emoji")},
		{"channels", engine.Filter{ChannelIDs: []string{"general", "agent-notes:bob"}}, labels("wal", "wal2", "emoji", "ops")},
		{"sender", engine.Filter{SenderIDs: []string{"alice"}}, labels("wal", "journal", "policy")},
		{"senders", engine.Filter{SenderIDs: []string{"alice", "carol"}}, labels("wal", "journal", "policy", "emoji")},
		{"exclude sender", engine.Filter{ExcludeSender: "alice"}, labels("wal2", "ops", "emoji")},
		{"project", engine.Filter{Project: "cairn"}, labels("wal", "journal", "policy")},
		{"types", engine.Filter{MessageTypes: []string{"decision", "policy"}}, labels("wal", "policy")},
		{"min confidence", engine.Filter{MinConfidence: 0.7}, labels("wal", "journal", "policy")},
		{"min confidence 1", engine.Filter{MinConfidence: 1}, labels("policy")},
		{"since", engine.Filter{Since: base.Add(4 * time.Hour)}, labels("emoji", "policy")},
		{"until", engine.Filter{Until: base.Add(1 * time.Hour)}, labels("wal")},
		{"since until", engine.Filter{Since: base.Add(time.Hour), Until: base.Add(3 * time.Hour)}, labels("wal2", "journal")},
		{"combined", engine.Filter{ChannelIDs: []string{"general"}, ExcludeSender: "carol", MinConfidence: 0.5}, labels("wal")},
		{"nothing", engine.Filter{SenderIDs: []string{"nobody"}}, labels()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Filter-only listing: newest first.
			rs, err := e.Search(ctx, engine.SearchRequest{Filter: tc.filter})
			if err != nil {
				t.Fatal(err)
			}
			got := enginetest.ResultIDs(rs)
			if !slices.IsSortedFunc(got, func(a, b int64) int { return int(b - a) }) {
				t.Errorf("listing not newest first: %v", got)
			}
			slices.Sort(got)
			if want := tc.want; !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("listing: got %v, want %v", got, want)
			}
			// Keyword search with a query every document matches a term of:
			// the filter is applied before ranking and limiting.
			rs, err = e.Search(ctx, engine.SearchRequest{Query: "wal journal not deploy checkpoint", Filter: tc.filter, Limit: 1, MinScore: new(float64)})
			if err != nil {
				t.Fatal(err)
			}
			if len(tc.want) > 0 && (len(rs) != 1 || !slices.Contains(tc.want, rs[0].Message.ID)) {
				t.Errorf("keyword limit 1: got %v, want one of %v", enginetest.ResultIDs(rs), tc.want)
			}
			if len(tc.want) == 0 && len(rs) != 0 {
				t.Errorf("keyword: got %v, want nothing", enginetest.ResultIDs(rs))
			}
		})
	}
	rs, err := e.Search(ctx, engine.SearchRequest{Limit: 2})
	if err != nil || !reflect.DeepEqual(enginetest.ResultIDs(rs), []int64{id["policy"], id["emoji"]}) {
		t.Fatalf("listing limit 2: %v %v", enginetest.ResultIDs(rs), err)
	}
}

func TestSearchBadInput(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		req   engine.SearchRequest
		field string
	}{
		{engine.SearchRequest{Limit: -1}, "limit"},
		{engine.SearchRequest{Limit: engine.MaxLimit + 1}, "limit"},
		{engine.SearchRequest{Filter: engine.Filter{MinConfidence: math.NaN()}}, "min_confidence"},
		{engine.SearchRequest{Filter: engine.Filter{MinConfidence: 2}}, "min_confidence"},
		{engine.SearchRequest{Filter: engine.Filter{ChannelIDs: []string{"bad id"}}}, "channel"},
		{engine.SearchRequest{Filter: engine.Filter{SenderIDs: []string{""}}}, "sender"},
		{engine.SearchRequest{Filter: engine.Filter{ExcludeSender: "x y"}}, "exclude_sender"},
		{engine.SearchRequest{Filter: engine.Filter{Project: "x y"}}, "project"},
		{engine.SearchRequest{Filter: engine.Filter{MessageTypes: []string{"a b"}}}, "message_type"},
		{engine.SearchRequest{Filter: engine.Filter{Since: t0, Until: t0}}, "since/until"},
	} {
		var inv *engine.InvalidError
		if _, err := e.Search(ctx, tc.req); !errors.As(err, &inv) || inv.Field != tc.field {
			t.Errorf("Search(%+v): got %v, want InvalidError on %s", tc.req, err, tc.field)
		}
	}
}
