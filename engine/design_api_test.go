package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestCustomWeightsAreNormalized: custom weights are divided by their sum,
// so 2/0/0 scores exactly as 1/0/0 and a final score stays within [0,1].
func TestCustomWeightsAreNormalized(t *testing.T) {
	e, _ := enginetest.Open(t, engine.Options{})
	enginetest.MustStore(t, e, engine.NewMessage{Channel: "c", Sender: "ann", Content: "normalized weights", Confidence: enginetest.Ptr(1.0)})
	score := func(w engine.Ranking) float64 {
		rs, err := e.Search(context.Background(), engine.SearchRequest{Query: "normalized", Mode: engine.ModeKeyword, Ranking: w})
		if err != nil || len(rs) != 1 {
			t.Fatalf("%+v: %v %v", w, rs, err)
		}
		return rs[0].Score
	}
	one, two := score(engine.Ranking{Similarity: 1}), score(engine.Ranking{Similarity: 2})
	if math.Abs(one-two) > 1e-12 {
		t.Errorf("similarity 1 scores %v, similarity 2 scores %v", one, two)
	}
	if s := score(engine.Ranking{Similarity: 3, Recency: 3, Confidence: 3}); s > 1+1e-12 {
		t.Errorf("weights 3/3/3 score %v > 1", s)
	}
}

// TestMetadataTypeIsTheType: the plan keeps a message's type in
// metadata.type; without a type field, that is the type (for notes too),
// and the type field wins when both are given.
func TestMetadataTypeIsTheType(t *testing.T) {
	e, _ := enginetest.Open(t, engine.Options{})
	ctx := context.Background()
	for _, c := range []struct {
		in   engine.NewMessage
		want string
	}{
		{engine.NewMessage{Channel: "c", Sender: "a", Content: "one", Metadata: json.RawMessage(`{"type":"decision"}`)}, "decision"},
		{engine.NewMessage{Channel: "c", Sender: "a", Content: "two", Type: "pattern", Metadata: json.RawMessage(`{"type":"decision"}`)}, "pattern"},
		{engine.NewMessage{Channel: "c", Sender: "a", Content: "three", Metadata: json.RawMessage(`{"type":7}`)}, engine.TypeMessage},
	} {
		m, err := e.GetMessage(ctx, enginetest.MustStore(t, e, c.in))
		if err != nil || m.MessageType != c.want {
			t.Errorf("%s: type %q, %v; want %q", c.in.Content, m.MessageType, err, c.want)
		}
	}
	m, err := e.GetMessage(ctx, enginetest.MustNote(t, e, engine.NewNote{Agent: "a", Content: "note", Metadata: json.RawMessage(`{"type":"policy"}`)}))
	if err != nil || m.MessageType != "policy" {
		t.Errorf("note: type %q, %v; want policy", m.MessageType, err)
	}
	var inv *engine.InvalidError
	if _, err := e.StoreMessage(ctx, engine.NewMessage{Channel: "c", Sender: "a", Content: "bad", Metadata: json.RawMessage(`{"type":"no spaces"}`)}); !errors.As(err, &inv) || inv.Field != "metadata.type" {
		t.Errorf("bad metadata.type: %v", err)
	}
}

// TestWhereAgeDays: age_days in a where filter selects by age at the time
// of the search, the same in a keyword (SQL) and a filter-only search; an
// age_days the filter cannot bound is refused naming where.
func TestWhereAgeDays(t *testing.T) {
	e, clk := enginetest.Open(t, engine.Options{})
	clk.Set(time.Now().Add(-10 * 24 * time.Hour))
	old := enginetest.MustStore(t, e, engine.NewMessage{Channel: "c", Sender: "a", Content: "aged cheese"})
	clk.Set(time.Now())
	fresh := enginetest.MustStore(t, e, engine.NewMessage{Channel: "c", Sender: "a", Content: "fresh cheese"})
	for _, c := range []struct {
		query, where string
		want         int64
	}{
		{"cheese", `{"age_days":{"$lt":7}}`, fresh},
		{"cheese", `{"age_days":{"$gte":7}}`, old},
		{"", `{"$and":[{"age_days":{"$gt":1}},{"age_days":{"$lte":30}}]}`, old},
	} {
		rs, err := e.Search(context.Background(), engine.SearchRequest{Query: c.query, Mode: engine.ModeKeyword, Filter: engine.Filter{Where: json.RawMessage(c.where)}})
		if err != nil || len(rs) != 1 || rs[0].Message.ID != c.want {
			t.Errorf("%q where %s: %v %v, want only %d", c.query, c.where, rs, err, c.want)
		}
	}
	for _, w := range []string{`{"age_days":{"$eq":3}}`, `{"age_days":{"$lt":-1}}`} {
		err := engine.SearchRequest{Query: "x", Filter: engine.Filter{Where: json.RawMessage(w)}}.Validate()
		var inv *engine.InvalidError
		if !errors.As(err, &inv) || inv.Field != "where" {
			t.Errorf("where %s: %v, want invalid where", w, err)
		}
	}
}
