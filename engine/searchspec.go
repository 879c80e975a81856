package engine

import (
	"encoding/json"
	"math"
	"strings"
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
	Limit   int      `json:"limit,omitempty" jsonschema:"number of results (default 20, at most 1000)"`

	Channels       []string        `json:"channels,omitempty" jsonschema:"only these channel ids"`
	ChannelTypes   []string        `json:"channel_types,omitempty" jsonschema:"only channels of these types: agent-notes, project, channel"`
	Senders        []string        `json:"senders,omitempty" jsonschema:"only messages from these agents"`
	ExcludeSender  string          `json:"exclude_sender,omitempty" jsonschema:"leave out messages from this agent (e.g. yourself)"`
	Project        string          `json:"project,omitempty" jsonschema:"only messages written for this project"`
	Types          []string        `json:"types,omitempty" jsonschema:"only these message types (reflection, decision, pattern, policy, ...)"`
	MinConfidence  float64         `json:"min_confidence,omitempty" jsonschema:"only messages with at least this confidence (0 to 1)"`
	Since          *time.Time      `json:"since,omitempty" jsonschema:"only messages created at or after this time (RFC 3339)"`
	Until          *time.Time      `json:"until,omitempty" jsonschema:"only messages created before this time (RFC 3339)"`
	MaxAgeHours    float64         `json:"max_age_hours,omitempty" jsonschema:"only messages at most this many hours old (at most 1000000)"`
	HasBreadcrumbs *bool           `json:"has_breadcrumbs,omitempty" jsonschema:"only messages with (true) or without (false) breadcrumbs"`
	MinWordCount   int             `json:"min_word_count,omitempty" jsonschema:"only messages of at least this many words"`
	Where          json.RawMessage `json:"where,omitempty" jsonschema:"Chroma-style where filter over channel_id, channel_type, agent_name, project_id, timestamp, confidence, message_type, word_count, has_breadcrumbs"`
	UnreadBy       string          `json:"unread_by,omitempty" jsonschema:"only messages this agent has not read yet (see get_unread)"`
}

// Weights are custom ranking weights and half-life; absent weights are 0.
type Weights struct {
	Similarity    float64 `json:"similarity,omitempty" jsonschema:"weight of relevance (>= 0)"`
	Recency       float64 `json:"recency,omitempty" jsonschema:"weight of recency (>= 0)"`
	Confidence    float64 `json:"confidence,omitempty" jsonschema:"weight of the author's confidence (>= 0)"`
	HalfLifeHours float64 `json:"half_life_hours,omitempty" jsonschema:"recency half-life in hours (0: no decay)"`
}

// Bounds of SearchSpec, the same on every surface. Durations are given in
// hours and bounded so that they always fit a time.Duration (which holds
// about 2.56 million hours).
const (
	// MaxSpecHours bounds max_age_hours and weights.half_life_hours (about
	// 114 years).
	MaxSpecHours = 1e6
	// MaxSpecLimit bounds limit (the Go API allows up to MaxLimit).
	MaxSpecLimit = 1000
)

// Request validates s and returns the SearchRequest it stands for: every
// rule a search checks is checked here, before any engine is opened, and
// errors are *InvalidError naming the JSON field. CLI, HTTP and MCP all
// build a SearchSpec, so they accept and reject the same searches.
func (s SearchSpec) Request() (SearchRequest, error) {
	if s.Limit < 0 || s.Limit > MaxSpecLimit {
		return SearchRequest{}, invalid("limit", "must be from 1 to %d (0 means %d), got %d", MaxSpecLimit, DefaultSearchLimit, s.Limit)
	}
	maxAge, err := specHours("max_age_hours", s.MaxAgeHours)
	if err != nil {
		return SearchRequest{}, err
	}
	if s.MinWordCount < 0 {
		return SearchRequest{}, invalid("min_word_count", "must be >= 0, got %d", s.MinWordCount)
	}
	req := SearchRequest{
		Query: s.Query, Limit: s.Limit, Mode: SearchMode(s.Mode), Fusion: Fusion(s.Fusion),
		Ranking: Ranking{Profile: s.Profile},
		Filter: Filter{
			ChannelIDs: s.Channels, ChannelTypes: s.ChannelTypes, SenderIDs: s.Senders,
			ExcludeSender: s.ExcludeSender, Project: s.Project, MessageTypes: s.Types,
			MinConfidence: s.MinConfidence, HasBreadcrumbs: s.HasBreadcrumbs,
			MinWordCount: s.MinWordCount, Where: s.Where, MaxAge: maxAge,
			UnreadBy: s.UnreadBy,
		},
	}
	if s.Since != nil {
		req.Filter.Since = *s.Since
	}
	if s.Until != nil {
		req.Filter.Until = *s.Until
	}
	if w := s.Weights; w != nil {
		// Weights make a custom profile, even all zero (which the custom
		// profile then rejects).
		switch p := strings.ToLower(strings.TrimSpace(s.Profile)); p {
		case "", ProfileCustom:
			req.Ranking.Profile = ProfileCustom
		default:
			return SearchRequest{}, customOnly(p)
		}
		halfLife, err := specHours("weights.half_life_hours", w.HalfLifeHours)
		if err != nil {
			return SearchRequest{}, err
		}
		req.Ranking.Similarity, req.Ranking.Recency, req.Ranking.Confidence = w.Similarity, w.Recency, w.Confidence
		req.Ranking.HalfLife = halfLife
	}
	// The rest (mode, fusion, profile, weights, filters) is the search's
	// own first step; the clock only resolves max_age_hours.
	if _, err := planSearch(req, time.Now()); err != nil {
		return SearchRequest{}, err
	}
	return req, nil
}

// specHours checks a number of hours against MaxSpecHours and returns it
// as a duration.
func specHours(field string, h float64) (time.Duration, error) {
	if math.IsNaN(h) || h < 0 || h > MaxSpecHours {
		return 0, invalid(field, "must be a number of hours from 0 to %.0f, got %v", float64(MaxSpecHours), h)
	}
	return time.Duration(h * float64(time.Hour)), nil
}
