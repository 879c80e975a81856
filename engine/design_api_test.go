package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
)

// search runs a SearchSpec given as JSON, as the HTTP API and the MCP
// tool take it.
func searchJSON(t *testing.T, e *engine.Engine, spec string) ([]engine.SearchResult, error) {
	t.Helper()
	var s engine.SearchSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		return nil, err
	}
	req, err := s.Request()
	if err != nil {
		return nil, err
	}
	return e.Search(context.Background(), req)
}

// TestPlanSearchShapes: the implementation plan's search_messages
// arguments (filters{channel_ids, sender_ids, message_type,
// min_confidence, since} and ranking_profile as a name or custom weights)
// select and rank as the flat fields do; giving a filter both ways is
// refused naming it.
func TestPlanSearchShapes(t *testing.T) {
	e, clk := openTest(t, engine.Options{})
	clk.Set(time.Now().Add(-30 * 24 * time.Hour))
	old := mustStore(t, e, engine.NewMessage{Channel: "global:general", Sender: "ann", Content: "deploy with blue green", Confidence: ptr(0.9), Type: "decision"})
	clk.Set(time.Now())
	recent := mustStore(t, e, engine.NewMessage{Channel: "global:general", Sender: "bob", Content: "deploy with blue green slots", Confidence: ptr(0.2), Type: "decision"})
	mustStore(t, e, engine.NewMessage{Channel: "project:backend", Sender: "ann", Content: "deploy notes", Confidence: ptr(0.9)})

	for _, c := range []struct {
		spec string
		want []int64
	}{
		{`{"query":"deploy","mode":"keyword","filters":{"channel_ids":["global:general"],"sender_ids":["ann"]}}`, []int64{old}},
		{`{"query":"deploy","mode":"keyword","filters":{"message_type":"decision","min_confidence":0.5}}`, []int64{old}},
		{`{"query":"deploy blue green","mode":"keyword","filters":{"channel_ids":["global:general"]},"ranking_profile":"recent"}`, []int64{recent, old}},
		{`{"query":"deploy blue green","mode":"keyword","filters":{"channel_ids":["global:general"]},"ranking_profile":{"similarity_weight":0,"decay_weight":0,"confidence_weight":1}}`, []int64{old, recent}},
	} {
		rs, err := searchJSON(t, e, c.spec)
		if err != nil {
			t.Errorf("%s: %v", c.spec, err)
			continue
		}
		var got []int64
		for _, r := range rs {
			got = append(got, r.Message.ID)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.spec, got, c.want)
		}
	}
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	if rs, err := searchJSON(t, e, `{"query":"deploy","mode":"keyword","filters":{"since":"`+since+`"}}`); err != nil || len(rs) != 2 {
		t.Errorf("filters.since: %d results, %v", len(rs), err)
	}
	for spec, field := range map[string]string{
		`{"channels":["a"],"filters":{"channel_ids":["b"]}}`: "filters.channel_ids",
		`{"filters":{"min_confidence":2}}`:                   "filters.min_confidence",
		`{"profile":"recent","ranking_profile":"quality"}`:   "ranking_profile",
		`{"ranking_profile":"telepathy"}`:                    "profile",
		`{"ranking_profile":{"similarity_weight":-1}}`:       "weights.similarity",
		`{"query":"x","where":{"age_days":{"$eq":3}}}`:       "where",
		`{"query":"x","where":{"age_days":{"$lt":-1}}}`:      "where",
	} {
		_, err := searchJSON(t, e, spec)
		var inv *engine.InvalidError
		if !errors.As(err, &inv) || inv.Field != field {
			t.Errorf("%s: %v, want invalid %s", spec, err, field)
		}
	}
	if _, err := searchJSON(t, e, `{"ranking_profile":{"simillarity_weight":1}}`); err == nil {
		t.Error("unknown weight name accepted")
	}
}

// TestCustomWeightsAreNormalized: custom weights are divided by their sum,
// so 2/0/0 scores exactly as 1/0/0 and a final score stays within [0,1].
func TestCustomWeightsAreNormalized(t *testing.T) {
	e, _ := openTest(t, engine.Options{})
	mustStore(t, e, engine.NewMessage{Channel: "c", Sender: "ann", Content: "normalized weights", Confidence: ptr(1.0)})
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
	e, _ := openTest(t, engine.Options{})
	ctx := context.Background()
	for _, c := range []struct {
		in   engine.NewMessage
		want string
	}{
		{engine.NewMessage{Channel: "c", Sender: "a", Content: "one", Metadata: json.RawMessage(`{"type":"decision"}`)}, "decision"},
		{engine.NewMessage{Channel: "c", Sender: "a", Content: "two", Type: "pattern", Metadata: json.RawMessage(`{"type":"decision"}`)}, "pattern"},
		{engine.NewMessage{Channel: "c", Sender: "a", Content: "three", Metadata: json.RawMessage(`{"type":7}`)}, engine.TypeMessage},
	} {
		m, err := e.GetMessage(ctx, mustStore(t, e, c.in))
		if err != nil || m.MessageType != c.want {
			t.Errorf("%s: type %q, %v; want %q", c.in.Content, m.MessageType, err, c.want)
		}
	}
	m, err := e.GetMessage(ctx, mustNote(t, e, engine.NewNote{Agent: "a", Content: "note", Metadata: json.RawMessage(`{"type":"policy"}`)}))
	if err != nil || m.MessageType != "policy" {
		t.Errorf("note: type %q, %v; want policy", m.MessageType, err)
	}
	var inv *engine.InvalidError
	if _, err := e.StoreMessage(ctx, engine.NewMessage{Channel: "c", Sender: "a", Content: "bad", Metadata: json.RawMessage(`{"type":"no spaces"}`)}); !errors.As(err, &inv) || inv.Field != "metadata.type" {
		t.Errorf("bad metadata.type: %v", err)
	}
}

// TestWhereAgeDays: age_days in a where filter selects by age at the time
// of the search, the same in a keyword (SQL) and a filter-only search.
func TestWhereAgeDays(t *testing.T) {
	e, clk := openTest(t, engine.Options{})
	clk.Set(time.Now().Add(-10 * 24 * time.Hour))
	old := mustStore(t, e, engine.NewMessage{Channel: "c", Sender: "a", Content: "aged cheese"})
	clk.Set(time.Now())
	fresh := mustStore(t, e, engine.NewMessage{Channel: "c", Sender: "a", Content: "fresh cheese"})
	for _, c := range []struct {
		spec string
		want int64
	}{
		{`{"query":"cheese","mode":"keyword","where":{"age_days":{"$lt":7}}}`, fresh},
		{`{"query":"cheese","mode":"keyword","where":{"age_days":{"$gte":7}}}`, old},
		{`{"where":{"$and":[{"age_days":{"$gt":1}},{"age_days":{"$lte":30}}]}}`, old},
	} {
		rs, err := searchJSON(t, e, c.spec)
		if err != nil || len(rs) != 1 || rs[0].Message.ID != c.want {
			t.Errorf("%s: %v %v, want only %d", c.spec, rs, err, c.want)
		}
	}
}
