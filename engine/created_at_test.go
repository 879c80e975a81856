package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestFaultCreatedAtWindow: created_at must fall from 2000-01-01 to a day
// past the engine's clock, on every write path (StoreMessage, WriteNote,
// StoreMessages, ImportMessages); the error names created_at and nothing
// is written.
func TestFaultCreatedAtWindow(t *testing.T) {
	ctx := context.Background()
	e, clk := enginetest.Open(t, engine.Options{})
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	clk.Set(now)
	clk.SetStep(0)
	bad := []time.Time{
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		now.Add(25 * time.Hour),
		time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.UnixMilli(1),
	}
	isCreatedAt := func(err error) bool {
		var inv *engine.InvalidError
		return errors.As(err, &inv) && inv.Field == "created_at"
	}
	for _, at := range bad {
		if _, err := e.StoreMessage(ctx, engine.NewMessage{Channel: "general", Sender: "a", Content: "m " + at.String(), CreatedAt: at}); !isCreatedAt(err) {
			t.Errorf("StoreMessage at %s: %v, want invalid created_at", at, err)
		}
		if _, err := e.WriteNote(ctx, engine.NewNote{Agent: "a", Content: "n " + at.String(), CreatedAt: at}); !isCreatedAt(err) {
			t.Errorf("WriteNote at %s: %v, want invalid created_at", at, err)
		}
		if _, err := e.StoreMessages(ctx, []engine.NewMessage{{Channel: "general", Sender: "a", Content: "b " + at.String(), CreatedAt: at}}); !isCreatedAt(err) {
			t.Errorf("StoreMessages at %s: %v, want invalid created_at", at, err)
		}
	}
	imp := `{"channel":"general","sender":"a","content":"ok","created_at":"2026-05-01T00:00:00Z"}
{"channel":"general","sender":"a","content":"future","created_at":"9999-12-31T23:59:59Z"}
{"channel":"general","sender":"a","content":"zero","created_at":"0001-01-01T00:00:00Z"}
`
	rep, err := ingest.ImportMessages(ctx, e, strings.NewReader(imp), ingest.ImportMessagesOptions{})
	if err == nil || rep == nil || rep.Invalid != 2 {
		t.Fatalf("import: %v %+v, want 2 invalid lines", err, rep)
	}
	for _, le := range rep.Errors {
		if !strings.Contains(le.Error(), "created_at") {
			t.Errorf("import error %q does not name created_at", le)
		}
	}
	st, err := ops.StoreStats(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	if st.Messages != 0 {
		t.Fatalf("%d messages written with a bad created_at", st.Messages)
	}
	for _, at := range []time.Time{engine.MinCreatedAt(), now.Add(23 * time.Hour), now.Add(-24 * 365 * time.Hour)} {
		if _, err := e.StoreMessage(ctx, engine.NewMessage{Channel: "agent-notes:a", Sender: "a", Content: "ok " + at.String(), CreatedAt: at}); err != nil {
			t.Errorf("created_at %s refused: %v", at, err)
		}
	}
}
