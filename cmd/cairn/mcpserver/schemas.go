package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/cairn-dev/cairn/cmd/cairn/searchwire"
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
				"decay_half_life_hours": {Type: "number", Minimum: ptr(0.0), Maximum: ptr(float64(engine.MaxHours)), Description: "recency half-life in hours"},
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
		"limit":          between(0, searchwire.MaxLimit),
		"min_confidence": between(0, 1),
		"max_age_hours":  between(0, engine.MaxHours),
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

// searchDescriptions describe search_messages' arguments (searchwire.SearchSpec's
// JSON fields, "filters.x" for the grouped filters): what an agent reads
// in the tool's schema lives here, with the adapter, not in the engine.
var searchDescriptions = map[string]string{
	"query":                   "what you are looking for, in your own words; empty lists the newest messages that pass the filters",
	"mode":                    "hybrid (default: meaning and keywords), semantic or keyword",
	"profile":                 "ranking profile: similarity (default), balanced, recent, quality, multiplicative or custom",
	"weights":                 "custom ranking weights (profile custom), divided by their sum",
	"fusion":                  "hybrid fusion: calibrated (default), minmax, weighted or rrf",
	"min_score":               "relevance floor from 0 to 1: results less likely relevant are left out (default 0.02; 0 returns every result)",
	"limit":                   "number of results (default 20, at most 1000)",
	"channels":                "only these channel ids",
	"channel_types":           "only channels of these types: agent-notes, project, channel",
	"senders":                 "only messages from these agents",
	"exclude_sender":          "leave out messages from this agent (e.g. yourself)",
	"project":                 "only messages written for this project",
	"types":                   "only these message types (reflection, decision, pattern, policy, ...)",
	"min_confidence":          "only messages with at least this confidence (0 to 1)",
	"since":                   "only messages created at or after this time (RFC 3339)",
	"until":                   "only messages created before this time (RFC 3339)",
	"max_age_hours":           "only messages at most this many hours old (at most 1000000)",
	"has_breadcrumbs":         "only messages with (true) or without (false) breadcrumbs",
	"min_word_count":          "only messages of at least this many words",
	"where":                   "Chroma-style where filter over channel_id, channel_type, agent_name, project_id, timestamp, age_days, confidence, message_type, word_count, has_breadcrumbs",
	"unread_by":               "only messages this agent has not read yet (see get_unread)",
	"breadcrumbs_valid":       "only notes whose breadcrumbs were checked at the repository's current HEAD and are all still valid",
	"demote_stale":            "multiply the score of notes whose breadcrumbs changed or are gone at the repository's HEAD by this factor (0 < f <= 1, e.g. 0.5; 0 = off)",
	"include_superseded":      "also messages a later one superseded (left out by default)",
	"filters":                 "the same filters grouped as the implementation plan writes them (alternative to the flat fields)",
	"filters.channel_ids":     "only these channel ids (as channels)",
	"filters.sender_ids":      "only messages from these agents (as senders)",
	"filters.message_type":    "only this message type (as types)",
	"filters.min_confidence":  "only messages with at least this confidence, 0 to 1",
	"filters.since":           "only messages created at or after this time (RFC 3339)",
	"weights.similarity":      "weight of relevance (>= 0)",
	"weights.recency":         "weight of recency (>= 0)",
	"weights.confidence":      "weight of the author's confidence (>= 0)",
	"weights.half_life_hours": "recency half-life in hours (0: no decay)",
}

// describe sets the description of each property descs names ("a.b" for
// property b of object property a); a name the schema lacks is an error, so
// a renamed engine field cannot leave its description behind silently.
func describe(s *jsonschema.Schema, descs map[string]string) error {
	for name, desc := range descs {
		p := s
		for _, part := range strings.Split(name, ".") {
			if p = p.Properties[part]; p == nil {
				return fmt.Errorf("input schema has no property %q to describe", name)
			}
		}
		p.Description = desc
	}
	return nil
}

// searchCore are the search fields whose descriptions the search tools'
// schema keeps; the other fields keep their names, types and bounds (so
// arguments are still checked) without descriptions, which would cost
// the model's context in every session for options it rarely needs.
var searchCore = map[string]string{
	"query":    "what you are looking for, in your own words",
	"project":  "only messages of this project (your repository's top directory name)",
	"channels": "only these channel ids",
	"types":    "only these message types: decision, pattern, policy, reflection, ...",
	"where":    `a Chroma-style where filter as a JSON object, e.g. {"confidence":{"$gte":0.7}}`,
	"limit":    "number of results (default 20)",
	"full":     "whole contents, metadata and score breakdown instead of first lines",
}

// compactSearch rewrites the search schema's descriptions to searchCore
// and states the other fields' nested objects (filters, weights,
// ranking_profile) as objects only; the handler decodes the arguments
// strictly, so an unknown nested field is still refused.
func compactSearch(s *jsonschema.Schema) {
	for name, p := range s.Properties {
		if d, ok := searchCore[name]; ok {
			p.Description = d
			continue
		}
		p.Description = ""
		if p.Properties != nil || p.AnyOf != nil {
			s.Properties[name] = &jsonschema.Schema{Type: "object"}
			if name == "ranking_profile" { // a profile name or weights
				s.Properties[name] = &jsonschema.Schema{Types: []string{"string", "object"}}
			}
		}
	}
}
