package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// FuzzImportMessages: any bytes given to `cairn import messages` give a
// report or an *InvalidError, never another error or a panic, and a line
// longer than the cap is refused naming it.
func FuzzImportMessages(f *testing.F) {
	for _, s := range []string{
		`{"channel":"general","sender":"a","content":"hi"}`,
		`{"channel":"agent-notes:a","sender":"a","content":"x","metadata":{"k":[1,{"b":null}]},"breadcrumbs":{"files":["a","a"]}}`,
		`{"channel_id":"general","sender_id":"a","content":"x","created_at":"9999-12-31T23:59:59Z"}`,
		"{\"channel\":\"general\",\"sender\":\"a\",\"content\":\"\\u0000\"}\n\n[]\nnull\n{}",
		`{"channel":"general","sender":"a","content":"x","confidence":1e999}`,
		"\xff\xfe\n" + string(bytes.Repeat([]byte("x"), 5000)),
	} {
		f.Add([]byte(s))
	}
	// One engine for every input: opening one per input would leave the
	// fuzzer a few executions a minute. Inputs accumulate in it.
	e := enginetest.OpenFuzz(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := ingest.ImportMessages(context.Background(), e, bytes.NewReader(data), ingest.ImportMessagesOptions{SkipInvalid: true, MaxLineBytes: 4096})
		var inv *engine.InvalidError
		if err != nil && !errors.As(err, &inv) {
			t.Fatalf("ImportMessages: %v", err)
		}
		if err == nil && rep.Imported+rep.AlreadyStored+rep.Invalid != rep.Lines {
			t.Fatalf("report %+v does not add up", rep)
		}
	})
}
