package ingest_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

const importGood = `{"channel":"general","sender":"ann","content":"first"}

{"channel_id":"general","sender_id":"bob","sender_project_id":"p1","content":"aliases work","metadata":null}
{"channel":"agent-notes:ann","sender":"ann","content":"a note","created_at":"2026-01-01T00:00:00Z","confidence":0.5}
`

// TestImportMessages: valid lines import in batches, plain channels are
// created, the aliases of cairn's JSON output are accepted, and a second
// import finds everything already stored.
func TestImportMessages(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	rep, err := ingest.ImportMessages(ctx, e, strings.NewReader(importGood), ingest.ImportMessagesOptions{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lines != 3 || rep.Imported != 3 || rep.AlreadyStored != 0 || rep.Invalid != 0 || strings.Join(rep.ChannelsCreated, ",") != "general" {
		t.Errorf("first import = %+v", rep)
	}
	msgs, err := e.GetChannelMessages(ctx, "general", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 {
		t.Errorf("general holds %d messages, want 2", len(msgs))
	}
	rep, err = ingest.ImportMessages(ctx, e, strings.NewReader(importGood), ingest.ImportMessagesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Imported != 0 || rep.AlreadyStored != 3 || len(rep.ChannelsCreated) != 0 {
		t.Errorf("second import = %+v, want 3 already stored", rep)
	}
}

// TestImportMessagesInvalid: one invalid line imports nothing (and creates
// no channel) unless SkipInvalid; every invalid line is reported by number.
func TestImportMessagesInvalid(t *testing.T) {
	ctx := context.Background()
	in := importGood + `{"channel":"general","content":"no sender"}
not json
{"channel":"elsewhere","sender":"ann","content":"x"} {"two":"values"}
`
	e, _ := enginetest.Open(t, engine.Options{})
	rep, err := ingest.ImportMessages(ctx, e, strings.NewReader(in), ingest.ImportMessagesOptions{})
	var ie *engine.InvalidError
	if !errors.As(err, &ie) || ie.Field != "lines" {
		t.Fatalf("err = %v, want an InvalidError for lines", err)
	}
	if got := lineNumbers(rep.Errors); got != "5,6,7" || rep.Invalid != 3 || rep.Lines != 6 {
		t.Errorf("report = %+v (lines %s), want lines 5,6,7 of 6 invalid", rep, got)
	}
	if _, err := e.GetChannel(ctx, "general"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("GetChannel(general) = %v, want ErrNotFound (nothing written)", err)
	}
	rep, err = ingest.ImportMessages(ctx, e, strings.NewReader(in), ingest.ImportMessagesOptions{SkipInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Imported != 3 || rep.Invalid != 3 {
		t.Errorf("skip-invalid import = %+v, want 3 imported and 3 invalid", rep)
	}
}

// TestImportMessagesNoCreateChannels: a plain channel that does not exist
// makes its lines invalid; notes channels are always created.
func TestImportMessagesNoCreateChannels(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	rep, err := ingest.ImportMessages(ctx, e, strings.NewReader(importGood), ingest.ImportMessagesOptions{NoCreateChannels: true, SkipInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := lineNumbers(rep.Errors); got != "1,3" || rep.Imported != 1 {
		t.Errorf("report = %+v (invalid lines %s), want lines 1,3 invalid and the note imported", rep, got)
	}
	if _, err := ingest.ImportMessages(ctx, e, strings.NewReader(""), ingest.ImportMessagesOptions{BatchSize: engine.MaxBatch + 1}); err == nil {
		t.Error("BatchSize past MaxBatch accepted")
	}
}

func lineNumbers(errs []ingest.LineError) string {
	var s []string
	for _, le := range errs {
		s = append(s, strconv.Itoa(le.Line))
	}
	return strings.Join(s, ",")
}
