package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/cairn-dev/cairn/engine"
	"github.com/google/jsonschema-go/jsonschema"
)

// bound is one constraint an input schema states, so that a client sees
// the allowed values before it calls (the engine checks them again).
type bound struct {
	enum     []any
	min, max *float64
}

func oneOf(vs ...string) bound {
	b := bound{}
	for _, v := range vs {
		b.enum = append(b.enum, v)
	}
	return b
}

func between(lo, hi float64) bound { return bound{min: &lo, max: &hi} }

// inputSchema is T's schema with bounds applied to its properties (for an
// array property, to its items). RawMessage fields (a where filter) are
// JSON objects; ranking_profile is a name or an object of weights.
func inputSchema[T any](bounds map[string]bound) (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {Type: "object"},
	}})
	if err != nil {
		return nil, err
	}
	// Set whole: the schema of a pointer field would otherwise be given
	// a "null" type that hides the anyOf.
	if _, ok := s.Properties["ranking_profile"]; ok {
		s.Properties["ranking_profile"] = rankingProfileSchema()
	}
	for name, b := range bounds {
		p, ok := s.Properties[name]
		if !ok {
			return nil, fmt.Errorf("input schema has no property %q to bound", name)
		}
		if p.Items != nil {
			p = p.Items
		}
		p.Enum, p.Minimum, p.Maximum = b.enum, b.min, b.max
	}
	return s, nil
}

func rankingProfileSchema() *jsonschema.Schema {
	weight := func(desc string) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "number", Minimum: ptr(0.0), Description: desc}
	}
	named := []any{}
	for _, p := range engine.Profiles() {
		if p != engine.ProfileCustom {
			named = append(named, p)
		}
	}
	return &jsonschema.Schema{
		Description: "a profile name, or custom weights (divided by their sum; absent ones default to similarity 0.5, decay 0.3, confidence 0.2, half-life 168 hours)",
		AnyOf: []*jsonschema.Schema{
			{Type: "string", Enum: named},
			{Type: "object", AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}, Properties: map[string]*jsonschema.Schema{
				"similarity_weight":     weight("weight of relevance"),
				"decay_weight":          weight("weight of recency"),
				"confidence_weight":     weight("weight of the author's confidence"),
				"decay_half_life_hours": {Type: "number", Minimum: ptr(0.0), Maximum: ptr(float64(engine.MaxSpecHours)), Description: "recency half-life in hours"},
			}},
		},
	}
}

// searchBounds are the search tools' schema bounds.
func searchBounds() map[string]bound {
	return map[string]bound{
		"mode":           oneOf(string(engine.ModeHybrid), string(engine.ModeSemantic), string(engine.ModeKeyword)),
		"profile":        oneOf(engine.Profiles()...),
		"fusion":         oneOf(string(engine.FusionCalibrated), string(engine.FusionMinMax), string(engine.FusionWeighted), string(engine.FusionRRF)),
		"min_score":      between(0, 1),
		"limit":          between(0, engine.MaxSpecLimit),
		"min_confidence": between(0, 1),
		"max_age_hours":  between(0, engine.MaxSpecHours),
		"min_word_count": between(0, math32),
		"demote_stale":   between(0, 1),
	}
}

// math32 bounds counts that fit an int32 on every platform.
const math32 = 1<<31 - 1

func writeBounds() map[string]bound {
	return map[string]bound{"confidence": between(0, 1)}
}

func listBounds() map[string]bound {
	return map[string]bound{"limit": between(0, maxToolLimit)}
}
