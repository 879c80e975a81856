package mcpserver

import (
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine/search"
	"github.com/google/jsonschema-go/jsonschema"
)

// TestSearchSchemaDescribesEveryArgument: every argument of search_messages,
// the grouped filters' and the weights' included, carries a description in
// the tool's schema, so a field added to searchwire.SearchSpec without one in
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

// The documented default of min_score is the floor in force.
func TestMinScoreDescriptionNamesTheDefaultFloor(t *testing.T) {
	want := "default " + strconv.FormatFloat(search.DefaultFloor, 'g', -1, 64) + ";"
	if d := searchDescriptions["min_score"]; !strings.Contains(d, want) {
		t.Errorf("min_score's description %q does not say %q", d, want)
	}
}
