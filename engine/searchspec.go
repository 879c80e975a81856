package engine

import (
	"encoding/json"
	"math"
	"time"
)

// SearchSpec is a search as the HTTP API and the MCP tools take it: JSON
// with flat, documented names. Request turns it into a SearchRequest, so
// every surface maps a search the same way.
type SearchSpec struct {
	Query string `json:"query,omitempty" jsonschema:"what you are looking for, in your own words; empty lists the newest messages that pass the filters"`
	// Mode is hybrid (default), semantic or keyword.
	Mode string `json:"mode,omitempty" jsonschema:"hybrid (default: meaning and keywords), semantic or keyword"`
	// Profile is a ranking profile (Profiles()); Weights make it custom.
	Profile string   `json:"profile,omitempty" jsonschema:"ranking profile: similarity (default), balanced, recent, quality, multiplicative or custom"`
	Weights *Weights `json:"weights,omitempty" jsonschema:"custom ranking weights (profile custom)"`
	Fusion  string   `json:"fusion,omitempty" jsonschema:"hybrid fusion: minmax (default), weighted or rrf"`
	Limit   int      `json:"limit,omitempty" jsonschema:"number of results"`

	Channels       []string        `json:"channels,omitempty" jsonschema:"only these channel ids"`
	ChannelTypes   []string        `json:"channel_types,omitempty" jsonschema:"only channels of these types: agent-notes, project, channel"`
	Senders        []string        `json:"senders,omitempty" jsonschema:"only messages from these agents"`
	ExcludeSender  string          `json:"exclude_sender,omitempty" jsonschema:"leave out messages from this agent (e.g. yourself)"`
	Project        string          `json:"project,omitempty" jsonschema:"only messages written for this project"`
	Types          []string        `json:"types,omitempty" jsonschema:"only these message types (reflection, decision, pattern, policy, ...)"`
	MinConfidence  float64         `json:"min_confidence,omitempty" jsonschema:"only messages with at least this confidence (0 to 1)"`
	Since          *time.Time      `json:"since,omitempty" jsonschema:"only messages created at or after this time (RFC 3339)"`
	Until          *time.Time      `json:"until,omitempty" jsonschema:"only messages created before this time (RFC 3339)"`
	MaxAgeHours    float64         `json:"max_age_hours,omitempty" jsonschema:"only messages at most this many hours old"`
	HasBreadcrumbs *bool           `json:"has_breadcrumbs,omitempty" jsonschema:"only messages with (true) or without (false) breadcrumbs"`
	MinWordCount   int             `json:"min_word_count,omitempty" jsonschema:"only messages of at least this many words"`
	Where          json.RawMessage `json:"where,omitempty" jsonschema:"Chroma-style where filter over channel_id, channel_type, agent_name, project_id, timestamp, confidence, message_type, word_count, has_breadcrumbs"`
}

// Weights are custom ranking weights and half-life.
type Weights struct {
	Similarity    float64 `json:"similarity" jsonschema:"weight of relevance (>= 0)"`
	Recency       float64 `json:"recency" jsonschema:"weight of recency (>= 0)"`
	Confidence    float64 `json:"confidence" jsonschema:"weight of the author's confidence (>= 0)"`
	HalfLifeHours float64 `json:"half_life_hours,omitempty" jsonschema:"recency half-life in hours (0: no decay)"`
}

// maxAgeHours bounds max_age_hours so the duration cannot overflow.
const maxAgeHours = 1e6

// Request validates s and returns the SearchRequest it stands for. Errors
// are *InvalidError naming the JSON field.
func (s SearchSpec) Request() (SearchRequest, error) {
	var req SearchRequest
	if math.IsNaN(s.MaxAgeHours) || s.MaxAgeHours < 0 || s.MaxAgeHours > maxAgeHours {
		return req, invalid("max_age_hours", "must be a number from 0 to %g, got %v", float64(maxAgeHours), s.MaxAgeHours)
	}
	if s.MinWordCount < 0 {
		return req, invalid("min_word_count", "must be >= 0, got %d", s.MinWordCount)
	}
	if s.Limit < 0 {
		return req, invalid("limit", "must be >= 0, got %d", s.Limit)
	}
	switch SearchMode(s.Mode) {
	case "", ModeHybrid, ModeSemantic, ModeKeyword:
	default:
		return req, invalid("mode", "must be hybrid, semantic or keyword, got %q", s.Mode)
	}
	switch Fusion(s.Fusion) {
	case "", FusionWeighted, FusionMinMax, FusionRRF:
	default:
		return req, invalid("fusion", "must be weighted, minmax or rrf, got %q", s.Fusion)
	}
	req = SearchRequest{
		Query: s.Query, Limit: s.Limit, Mode: SearchMode(s.Mode), Fusion: Fusion(s.Fusion),
		Ranking: Ranking{Profile: s.Profile},
		Filter: Filter{
			ChannelIDs: s.Channels, ChannelTypes: s.ChannelTypes, SenderIDs: s.Senders,
			ExcludeSender: s.ExcludeSender, Project: s.Project, MessageTypes: s.Types,
			MinConfidence: s.MinConfidence, HasBreadcrumbs: s.HasBreadcrumbs,
			MinWordCount: s.MinWordCount, Where: s.Where,
			MaxAge: time.Duration(s.MaxAgeHours * float64(time.Hour)),
		},
	}
	if s.Since != nil {
		req.Filter.Since = *s.Since
	}
	if s.Until != nil {
		req.Filter.Until = *s.Until
	}
	if w := s.Weights; w != nil {
		if math.IsNaN(w.HalfLifeHours) || w.HalfLifeHours < 0 || w.HalfLifeHours > maxAgeHours {
			return req, invalid("weights.half_life_hours", "must be a number from 0 to %g, got %v", float64(maxAgeHours), w.HalfLifeHours)
		}
		req.Ranking.Similarity, req.Ranking.Recency, req.Ranking.Confidence = w.Similarity, w.Recency, w.Confidence
		req.Ranking.HalfLife = time.Duration(w.HalfLifeHours * float64(time.Hour))
	}
	return req, nil
}
