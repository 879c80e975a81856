package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// A query naming a date ranks the messages of that date above equally
// relevant ones of other dates, in every mode, and finds them by their
// words, not by the date's.
func TestSearchBoostsNamedTime(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{Embedder: enginetest.NewHashEmbedder("hash-t", 64)})
	if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: "log"}); err != nil {
		t.Fatal(err)
	}
	sep := time.Date(2023, 9, 12, 10, 0, 0, 0, time.UTC)
	oct := time.Date(2023, 10, 13, 10, 0, 0, 0, time.UTC)
	enginetest.MustStore(t, e, engine.NewMessage{Channel: "log", Sender: "ann", Content: "the deploy failed with a timeout", CreatedAt: sep})
	want := enginetest.MustStore(t, e, engine.NewMessage{Channel: "log", Sender: "ann", Content: "the deploy failed with a timeout again", CreatedAt: oct})
	enginetest.MustStore(t, e, engine.NewMessage{Channel: "log", Sender: "ann", Content: "lunch was good", CreatedAt: oct})
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"why did the deploy fail in October 2023?", "deploy failed on 13 October 2023", "deploy failed 2023-10-13"} {
		for _, mode := range []engine.SearchMode{engine.ModeKeyword, engine.ModeSemantic, engine.ModeHybrid} {
			res, err := e.Search(ctx, engine.SearchRequest{Query: q, Mode: mode, Limit: 3})
			if err != nil {
				t.Fatalf("%s %q: %v", mode, q, err)
			}
			if len(res) == 0 || res[0].Message.ID != want {
				t.Errorf("%s %q: results %v, want %d (October's deploy) first", mode, q, enginetest.ResultIDs(res), want)
			}
		}
	}
}
