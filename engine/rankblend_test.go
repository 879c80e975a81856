package engine_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// In a conversation hybrid search blends its fused ranks with those of
// semantic search with turn context: a reply that shares no word with the
// query, found through the turn before it, climbs above turns that only
// share a word with the query; switched off, it stays below them. In a
// channel of one sender there is no context, and the ranking is exactly
// the fused one.
func TestSearchBlendsRanksInConversations(t *testing.T) {
	ctx := context.Background()
	clk := enginetest.NewClock()
	at := clk.Now().Add(-24 * time.Hour)
	// near are turns of a third sender that share a word or two with the
	// query: the fused list ranks them above the answer.
	type conv struct {
		topic, answer int64
		near          []int64
	}
	open := func(qa engine.QueryAnalysis) (*engine.Engine, map[string]conv) {
		e, _ := enginetest.Open(t, engine.Options{Embedder: enginetest.NewHashEmbedder("hash-b", 64), QueryAnalysis: qa, Now: clk.Now})
		m := map[string]conv{}
		for _, c := range []struct{ ch, answerSender string }{{"chat", "bob"}, {"solo", "ann"}} {
			var v conv
			var distractor int64
			v.topic, v.answer, distractor = contextConversation(t, e, c.ch, c.answerSender, at, at)
			v.near = append(v.near, distractor)
			for i, w := range []string{"wooden", "tap", "ballet"} {
				v.near = append(v.near, enginetest.MustStore(t, e, engine.NewMessage{Channel: c.ch, Sender: "cat", Content: fmt.Sprintf("the %s dance shoes %d", w, i), CreatedAt: at.Add(-5 * time.Hour)}))
			}
			m[c.ch] = v
		}
		if err := ops.SyncVectors(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
		return e, m
	}
	on, convs := open(engine.QueryAnalysis{})
	off, offConvs := open(engine.QueryAnalysis{NoRankBlend: true})
	search := func(e *engine.Engine, ch string) []engine.SearchResult {
		t.Helper()
		res, err := e.Search(ctx, engine.SearchRequest{Query: "grand opening of the dance studio", Mode: engine.ModeHybrid, Filter: engine.Filter{ChannelIDs: []string{ch}}, Limit: 10, MinScore: new(float64)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	c, res := convs["chat"], search(on, "chat")
	if rankOf(res, c.topic) != 1 {
		t.Fatalf("blend on: results %v, want the topic %d first", enginetest.ResultIDs(res), c.topic)
	}
	above := 0
	for _, id := range c.near {
		if rankOf(res, c.answer) < rankOf(res, id) {
			above++
		}
	}
	if above < len(c.near)-1 {
		t.Errorf("blend on: results %v: the answer %d ranks above %d of the turns %v that share a word with the query, want all but one", enginetest.ResultIDs(res), c.answer, above, c.near)
	}
	if a := res[rankOf(res, c.answer)-1]; a.Scores.Similarity > 0.2 || a.Scores.Context <= a.Scores.Similarity || a.Scores.Fused <= 0 || a.Scores.Fused > 1 {
		t.Errorf("blend on: the answer's scores %+v: want its own similarity, its context's above it and a relevance in (0,1]", a.Scores)
	}
	c, res = offConvs["chat"], search(off, "chat")
	for _, id := range c.near {
		if r := rankOf(res, c.answer); r != 0 && r < rankOf(res, id) {
			t.Errorf("blend off: results %v: the answer %d ranks above %d", enginetest.ResultIDs(res), c.answer, id)
		}
	}
	soloOn, soloOff := search(on, "solo"), search(off, "solo")
	if len(soloOn) != len(soloOff) {
		t.Fatalf("one sender: %d results with the blend, %d without", len(soloOn), len(soloOff))
	}
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 } // BM25 sums may differ in the last bits
	for i := range soloOn {
		// The two engines hold the same messages under the same ids.
		a, b := soloOn[i], soloOff[i]
		if a.Message.ID != b.Message.ID || !near(a.Scores.Fused, b.Scores.Fused) || !near(a.Scores.Similarity, b.Scores.Similarity) || !near(a.Scores.Keyword, b.Scores.Keyword) {
			t.Errorf("one sender, result %d: %d %+v with the blend, %d %+v without: want the same ranking", i, a.Message.ID, a.Scores, b.Message.ID, b.Scores)
		}
	}
}
