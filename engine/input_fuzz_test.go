package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

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
	e := enginetest.OpenFuzz(f)
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
