package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// contextConversation stores, in channel ch, a turn about the query's
// subject, the answer to it from answerSender at answerAt (which shares no
// word with the query), and a turn that shares one word with the query
// between turns of its own sender (so it has no neighbours).
func contextConversation(t *testing.T, e *engine.Engine, ch, answerSender string, at, answerAt time.Time) (topic, answer, distractor int64) {
	t.Helper()
	if _, err := e.CreateChannel(context.Background(), engine.NewChannel{ID: ch}); err != nil {
		t.Fatal(err)
	}
	enginetest.MustStore(t, e, engine.NewMessage{Channel: ch, Sender: "cat", Content: "lunch was pasta with basil", CreatedAt: at.Add(-3 * time.Hour)})
	distractor = enginetest.MustStore(t, e, engine.NewMessage{Channel: ch, Sender: "cat", Content: "my studio floor is wooden and creaky", CreatedAt: at.Add(-3 * time.Hour)})
	enginetest.MustStore(t, e, engine.NewMessage{Channel: ch, Sender: "cat", Content: "rain again all afternoon", CreatedAt: at.Add(-3 * time.Hour)})
	topic = enginetest.MustStore(t, e, engine.NewMessage{Channel: ch, Sender: "ann", Content: "tomorrow is the grand opening night of the dance studio", CreatedAt: at})
	answer = enginetest.MustStore(t, e, engine.NewMessage{Channel: ch, Sender: answerSender, Content: "thanks, so excited, cannot wait", CreatedAt: answerAt})
	return topic, answer, distractor
}

// A turn that says little alone is scored with the turn before it in
// semantic search, so it ranks above a turn that merely shares a word with
// the query; and only in a conversation: not in keyword mode, not when one
// sender wrote both turns, not two hours later, not when switched off, not
// past the filter. (Hybrid mode reads it too, in the relevance and the rank
// blend: engine/rankblend.go.)
func TestSearchScoresTurnsWithContext(t *testing.T) {
	ctx := context.Background()
	clk := enginetest.NewClock()
	open := func(qa engine.QueryAnalysis) *engine.Engine {
		e, _ := enginetest.Open(t, engine.Options{Embedder: enginetest.NewHashEmbedder("hash-c", 64), QueryAnalysis: qa, Now: clk.Now})
		return e
	}
	e := open(engine.QueryAnalysis{})
	off := open(engine.QueryAnalysis{NoTurnContext: true})
	at := clk.Now().Add(-24 * time.Hour)
	type conv struct{ topic, answer, distractor int64 }
	store := func(e *engine.Engine) map[string]conv {
		m := map[string]conv{}
		for _, c := range []struct {
			ch, sender string
			answerAt   time.Time
		}{{"chat", "bob", at}, {"solo", "ann", at}, {"late", "bob", at.Add(2 * time.Hour)}} {
			var v conv
			v.topic, v.answer, v.distractor = contextConversation(t, e, c.ch, c.sender, at, c.answerAt)
			m[c.ch] = v
		}
		if err := ops.SyncVectors(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
		return m
	}
	convs, offConvs := store(e), store(off)
	search := func(e *engine.Engine, ch string, mode engine.SearchMode, f engine.Filter) []engine.SearchResult {
		t.Helper()
		f.ChannelIDs = []string{ch}
		res, err := e.Search(ctx, engine.SearchRequest{Query: "grand opening of the dance studio", Mode: mode, Filter: f, Limit: 10, MinScore: new(float64)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	c := convs["chat"]
	res := search(e, "chat", engine.ModeSemantic, engine.Filter{})
	if rankOf(res, c.topic) != 1 || rankOf(res, c.answer) != 2 {
		t.Fatalf("results %v, want the topic %d then the answer %d", enginetest.ResultIDs(res), c.topic, c.answer)
	}
	if a := res[1]; a.Scores.Similarity > 0.2 || a.Scores.Context <= a.Scores.Similarity {
		t.Errorf("the answer's scores %+v: want its own similarity (the query shares no word with it) and its context's above it", a.Scores)
	}
	for _, c := range []struct {
		name string
		e    *engine.Engine
		ch   string
		mode engine.SearchMode
		conv conv
	}{
		{"keyword mode", e, "chat", engine.ModeKeyword, convs["chat"]},
		{"one sender", e, "solo", engine.ModeSemantic, convs["solo"]},
		{"two hours later", e, "late", engine.ModeSemantic, convs["late"]},
		{"switched off", off, "chat", engine.ModeSemantic, offConvs["chat"]},
	} {
		res := search(c.e, c.ch, c.mode, engine.Filter{})
		if r := rankOf(res, c.conv.answer); r != 0 && r < rankOf(res, c.conv.distractor) {
			t.Errorf("%s: results %v: the answer %d ranks above the distractor %d", c.name, enginetest.ResultIDs(res), c.conv.answer, c.conv.distractor)
		}
	}
	res = search(e, "chat", engine.ModeSemantic, engine.Filter{ExcludeSender: "bob"})
	if rankOf(res, convs["chat"].answer) != 0 {
		t.Errorf("filter excludes bob: results %v include his answer %d", enginetest.ResultIDs(res), convs["chat"].answer)
	}
}

// rankOf is the 1-based rank of message id in res, 0 when absent.
func rankOf(res []engine.SearchResult, id int64) int {
	for i, r := range res {
		if r.Message.ID == id {
			return i + 1
		}
	}
	return 0
}
