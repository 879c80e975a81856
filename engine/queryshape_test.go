package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// A question naming a sender finds that sender's own message, not the
// replies that address them by name, in every mode.
func TestSearchQueryNamingSender(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{Embedder: enginetest.NewHashEmbedder("hash-q", 64)})
	if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: "chat"}); err != nil {
		t.Fatal(err)
	}
	own := enginetest.MustStore(t, e, engine.NewMessage{Channel: "chat", Sender: "Caroline", Content: "I researched adoption agencies all week"})
	enginetest.MustStore(t, e, engine.NewMessage{Channel: "chat", Sender: "Melanie", Content: "Wow Caroline, Caroline, that is great news Caroline"})
	enginetest.MustStore(t, e, engine.NewMessage{Channel: "chat", Sender: "Melanie", Content: "Caroline! How was the week, Caroline?"})
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []engine.SearchMode{engine.ModeKeyword, engine.ModeSemantic, engine.ModeHybrid} {
		res, err := e.Search(ctx, engine.SearchRequest{Query: "What did Caroline's week of research cover?", Mode: mode, Limit: 3, MinScore: new(float64)})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if len(res) == 0 || res[0].Message.ID != own {
			t.Errorf("%s: first result %v, want Caroline's own message %d", mode, enginetest.ResultIDs(res), own)
		}
	}
	// A lower-case word is not taken for a name: "caroline" stays in the query.
	res, err := e.Search(ctx, engine.SearchRequest{Query: "caroline week", Mode: engine.ModeKeyword})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Errorf("lower-case name: %d results %v, want all 3 messages (the name is searched)", len(res), enginetest.ResultIDs(res))
	}
	// A query that is only a name still searches for the name.
	res, err = e.Search(ctx, engine.SearchRequest{Query: "Caroline", Mode: engine.ModeKeyword})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Errorf("query of the name alone: %d results %v, want the 2 messages containing it", len(res), enginetest.ResultIDs(res))
	}
}

// EmbedSenderDate embeds "sender (date): content" and changes nothing that
// is stored or returned.
func TestEmbedContextSenderDate(t *testing.T) {
	ctx := context.Background()
	emb := enginetest.NewHashEmbedder("hash-ctx", 32)
	// The near-duplicate check of a live write embeds the same text once
	// more (a caching embedder answers it): off, to count the worker's.
	e, _ := enginetest.Open(t, engine.Options{Embedder: emb, EmbedContext: engine.EmbedSenderDate, NearDuplicateCosine: 2})
	if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: "chat"}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	id := enginetest.MustStore(t, e, engine.NewMessage{Channel: "chat", Sender: "Caroline", Content: "I went to a support group yesterday", CreatedAt: at})
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	if got := emb.Embedded("Caroline (8 May 2023): I went to a support group yesterday"); got != 1 {
		t.Errorf("embedded the context text %d times, want 1", got)
	}
	if got := emb.Embedded("I went to a support group yesterday"); got != 0 {
		t.Errorf("embedded the bare content %d times, want 0", got)
	}
	res, err := e.Search(ctx, engine.SearchRequest{Query: "support group", Mode: engine.ModeSemantic, MinScore: new(float64)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Message.ID != id || res[0].Message.Content != "I went to a support group yesterday" {
		t.Errorf("search returned %+v, want the message as stored", res)
	}
}

func TestEmbedContextInvalid(t *testing.T) {
	_, err := enginetest.OpenEngine(context.Background(), t.TempDir(), engine.Options{EmbedContext: "neighbours"})
	var inv *engine.InvalidError
	if !errors.As(err, &inv) || inv.Field != "Options.EmbedContext" {
		t.Fatalf("Open with a bad EmbedContext: %v, want an invalid-argument error naming Options.EmbedContext", err)
	}
}
