package engine_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// replyConversation stores, in channel ch, a question and its reply
// (which shares no word with the question) and unrelated turns; the
// reply comes from replySender at replyAt.
func replyConversation(t *testing.T, e *engine.Engine, ch, replySender string, at, replyAt time.Time) (asker, reply int64) {
	t.Helper()
	if _, err := e.CreateChannel(context.Background(), engine.NewChannel{ID: ch}); err != nil {
		t.Fatal(err)
	}
	enginetest.MustStore(t, e, engine.NewMessage{Channel: ch, Sender: "ann", Content: "the garden is blooming with tulips", CreatedAt: at})
	enginetest.MustStore(t, e, engine.NewMessage{Channel: ch, Sender: "bob", Content: "lovely flowers in spring", CreatedAt: at})
	// Turns that share words with the question, which rank above the
	// reply unless it is lifted.
	enginetest.MustStore(t, e, engine.NewMessage{Channel: ch, Sender: "bob", Content: "it has been a long day, how are you", CreatedAt: at})
	enginetest.MustStore(t, e, engine.NewMessage{Channel: ch, Sender: "ann", Content: "we have been to the long beach", CreatedAt: at})
	asker = enginetest.MustStore(t, e, engine.NewMessage{Channel: ch, Sender: "ann", Content: "how long have you been married?", CreatedAt: at})
	reply = enginetest.MustStore(t, e, engine.NewMessage{Channel: ch, Sender: replySender, Content: "five years already, time flies", CreatedAt: replyAt})
	enginetest.MustStore(t, e, engine.NewMessage{Channel: ch, Sender: "ann", Content: "the weather turned cold again", CreatedAt: replyAt})
	return asker, reply
}

// The reply to a message that asks something among the best candidates is
// lifted right behind it in hybrid search, and only there: not in the pure
// modes, not in a channel of one sender, not a day later, not past the
// filter.
func TestSearchLiftsReplies(t *testing.T) {
	ctx := context.Background()
	// Turn context (engine/turncontext.go) would rank the reply right
	// behind its question in semantic mode too: this test is the lift's.
	e, clk := enginetest.Open(t, engine.Options{Embedder: enginetest.NewHashEmbedder("hash-r", 64), QueryAnalysis: engine.QueryAnalysis{NoTurnContext: true, LiftReplies: true}})
	at := clk.Now().Add(-time.Hour)
	asker, reply := replyConversation(t, e, "chat", "bob", at, at)
	soloAsker, soloReply := replyConversation(t, e, "solo", "ann", at, at)
	lateAsker, lateReply := replyConversation(t, e, "late", "bob", at.Add(-72*time.Hour), at.Add(-24*time.Hour))
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	search := func(ch string, mode engine.SearchMode, f engine.Filter) []engine.SearchResult {
		t.Helper()
		f.ChannelIDs = []string{ch}
		res, err := e.Search(ctx, engine.SearchRequest{Query: "How long have they been married?", Mode: mode, Filter: f, Limit: 4})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	res := search("chat", engine.ModeHybrid, engine.Filter{})
	if rankOf(res, asker) != 1 || rankOf(res, reply) != 2 {
		t.Fatalf("hybrid: results %v, want the question %d then its reply %d", enginetest.ResultIDs(res), asker, reply)
	}
	if got, want := res[1].Scores.Fused, 0.95*res[0].Scores.Fused; math.Abs(got-want) > 1e-9 {
		t.Errorf("reply's relevance %v, want 0.95 x the question's = %v", got, want)
	}
	if res[1].VectorMissing {
		t.Errorf("the lifted reply is reported without a vector")
	}
	for _, c := range []struct {
		name         string
		ch           string
		mode         engine.SearchMode
		f            engine.Filter
		asker, reply int64
	}{
		{"semantic mode", "chat", engine.ModeSemantic, engine.Filter{}, asker, reply},
		{"keyword mode", "chat", engine.ModeKeyword, engine.Filter{}, asker, reply},
		{"one sender", "solo", engine.ModeHybrid, engine.Filter{}, soloAsker, soloReply},
		{"a day later", "late", engine.ModeHybrid, engine.Filter{}, lateAsker, lateReply},
	} {
		res := search(c.ch, c.mode, c.f)
		if rankOf(res, c.asker) != 1 {
			t.Errorf("%s: results %v, want the question %d first", c.name, enginetest.ResultIDs(res), c.asker)
		}
		if rankOf(res, c.reply) == 2 {
			t.Errorf("%s: results %v: the reply %d was lifted", c.name, enginetest.ResultIDs(res), c.reply)
		}
	}
	res = search("chat", engine.ModeHybrid, engine.Filter{ExcludeSender: "bob"})
	if rankOf(res, reply) != 0 {
		t.Errorf("filter excludes bob: results %v include his reply %d", enginetest.ResultIDs(res), reply)
	}
}
