package mcpserver

import (
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestSearchSchemaDescribesEveryArgument: every argument of search_messages,
// the grouped filters' and the weights' included, carries a description in
// the tool's schema, so a field added to engine.SearchSpec without one in
// searchDescriptions fails here rather than reaching agents undescribed.
func TestSearchSchemaDescribesEveryArgument(t *testing.T) {
	s, err := inputSchema[SearchInput](searchBounds())
	if err != nil {
		t.Fatal(err)
	}
	if err := describe(s, searchDescriptions); err != nil {
		t.Fatal(err)
	}
	var walk func(prefix string, s *jsonschema.Schema)
	walk = func(prefix string, s *jsonschema.Schema) {
		for name, p := range s.Properties {
			if p.Description == "" {
				t.Errorf("argument %s%s has no description", prefix, name)
			}
			if name != "ranking_profile" {
				walk(prefix+name+".", p)
			}
		}
	}
	walk("", s)
	if err := describe(s, map[string]string{"filters.nowhere": "x"}); err == nil {
		t.Error("describing an argument the schema lacks succeeded")
	}
}
