package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/redact"
	"github.com/cairn-dev/cairn/internal/enginetest"
	"github.com/cairn-dev/cairn/internal/rawscan"
)

// TestRedactEveryField: a secret in a channel id, a sender, a project, a
// message type, a channel's name or description is redacted like one in
// the content: no file of the data dir holds it. A name keeps the form of
// a name ("redacted-RULE-HASH"), and the same secret gives the same name,
// so two writes to a channel named after a secret land in one channel.
func TestRedactEveryField(t *testing.T) {
	ctx := context.Background()
	red, err := redact.New(redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := enginetest.OpenEngine(ctx, t.TempDir(), engine.Options{Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	stripe := "sk_" + "live_4eC39HqLyjWDarjtT1zdp7dc"
	npm := "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
	hf := "hf_" + "jQwErTyUiOpAsDfGhJkLzXcVbNmQwErTyU"
	var results []engine.WriteResult
	for i := range 2 {
		res, err := e.StoreMessage(ctx, engine.NewMessage{Channel: "deploy-" + stripe, Sender: npm, Project: "team/" + hf,
			Type: "note-" + npm, Content: []string{"first deploy note", "second deploy note"}[i]})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	if results[0].ChannelID != results[1].ChannelID || !strings.HasPrefix(results[0].ChannelID, "deploy-redacted-stripe-access-token-") {
		t.Errorf("channel ids %q, %q: want one redacted name", results[0].ChannelID, results[1].ChannelID)
	}
	note, err := e.WriteNote(ctx, engine.NewNote{Agent: npm, Content: "a note of an agent named after a token"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(note.ChannelID, npm) {
		t.Errorf("notes channel %q holds the token", note.ChannelID)
	}
	ch, err := e.CreateChannel(ctx, engine.NewChannel{ID: "ops-" + hf, Name: "ops " + stripe, Description: "key is " + stripe + "."})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ch.ID+ch.Name+ch.Description, "live_4eC39") || strings.Contains(ch.ID, hf) {
		t.Errorf("created channel %+v holds a token", ch)
	}
	msgs, err := e.GetChannelMessages(ctx, results[0].ChannelID, 0, 10)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("channel %s: %d messages, %v", results[0].ChannelID, len(msgs), err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{stripe, npm, hf} {
		hits, err := rawscan.FilesContaining(e.Dir(), secret)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 0 {
			t.Errorf("%s stored verbatim in %v", secret[:6], hits)
		}
	}
}
