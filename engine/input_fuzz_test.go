package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
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
	e := openFuzzEngine(f)
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

// FuzzSearchWhere: a where filter from outside (HTTP /search, MCP, CLI
// --where) gives results or an *InvalidError naming it, never an SQL
// error or a panic.
func FuzzSearchWhere(f *testing.F) {
	for _, s := range []string{
		`{"confidence":{"$gte":0.5}}`, `{"$and":[{"channel_id":"general"},{"word_count":{"$lt":3}}]}`,
		`{"$or":[{"agent_name":{"$in":["a","b"]}},{"has_breadcrumbs":true}]}`, `{"timestamp":{"$gt":"2026-01-01"}}`,
		`{"message_type":{"$nin":[]}}`, `{"x":1}`, `[]`, `{"$and":[]}`, `{"confidence":{"$eq":"high"}}`,
	} {
		f.Add([]byte(s))
	}
	e := openFuzzEngine(f)
	corpus(f, e)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // the adapters refuse invalid JSON before the engine sees it
		}
		for _, q := range []string{"", "wal"} {
			_, err := e.Search(context.Background(), engine.SearchRequest{Query: q, Filter: engine.Filter{Where: raw}, Mode: engine.ModeKeyword})
			var inv *engine.InvalidError
			if err != nil && !errors.As(err, &inv) {
				t.Fatalf("Search(%q, where %s): %v", q, raw, err)
			}
		}
	})
}

// openFuzzEngine opens an engine in f's temp dir, closed when the fuzz
// target ends.
func openFuzzEngine(f *testing.F) *engine.Engine {
	e, err := enginetest.OpenEngine(context.Background(), f.TempDir(), engine.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { e.Close() })
	return e
}
