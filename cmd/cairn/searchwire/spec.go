package searchwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/engine"
)

// SearchSpec is a search as the HTTP API and the MCP tools take it: JSON
// with flat, documented names. Request turns it into an
// engine.SearchRequest, so every surface maps a search the same way.
type SearchSpec struct {
	Query string `json:"query,omitempty"`
	// Mode is hybrid (default), semantic or keyword.
	Mode string `json:"mode,omitempty"`
	// Profile is a ranking profile (engine.Profiles()); Weights make it
	// custom.
	Profile string   `json:"profile,omitempty"`
	Weights *Weights `json:"weights,omitempty"`
	Fusion  string   `json:"fusion,omitempty"`
	Limit   int      `json:"limit,omitempty"`
	// MinScore is engine.SearchRequest.MinScore.
	MinScore *float64 `json:"min_score,omitempty"`

	Channels       []string        `json:"channels,omitempty"`
	ChannelTypes   []string        `json:"channel_types,omitempty"`
	Senders        []string        `json:"senders,omitempty"`
	ExcludeSender  string          `json:"exclude_sender,omitempty"`
	Project        string          `json:"project,omitempty"`
	Types          []string        `json:"types,omitempty"`
	MinConfidence  float64         `json:"min_confidence,omitempty"`
	Since          *time.Time      `json:"since,omitempty"`
	Until          *time.Time      `json:"until,omitempty"`
	MaxAgeHours    float64         `json:"max_age_hours,omitempty"`
	HasBreadcrumbs *bool           `json:"has_breadcrumbs,omitempty"`
	MinWordCount   int             `json:"min_word_count,omitempty"`
	Where          json.RawMessage `json:"where,omitempty"`
	UnreadBy       string          `json:"unread_by,omitempty"`
	// BreadcrumbsValid and DemoteStale use the breadcrumb marks cache at
	// the repository's HEAD (engine.Filter.BreadcrumbsValid,
	// engine.Ranking.StaleFactor).
	BreadcrumbsValid bool `json:"breadcrumbs_valid,omitempty"`
	// IncludeSuperseded keeps messages another one superseded.
	IncludeSuperseded bool    `json:"include_superseded,omitempty"`
	DemoteStale       float64 `json:"demote_stale,omitempty"`

	// Filters and RankingProfile are the implementation plan's spelling of
	// the same search (search_messages(query, filters, limit,
	// ranking_profile)), accepted so that an agent written against it
	// works unchanged; each may not be combined with its flat twin.
	Filters        *SpecFilters    `json:"filters,omitempty"`
	RankingProfile *RankingProfile `json:"ranking_profile,omitempty"`
}

// SpecFilters are the implementation plan's grouped filters.
type SpecFilters struct {
	ChannelIDs    []string   `json:"channel_ids,omitempty"`
	SenderIDs     []string   `json:"sender_ids,omitempty"`
	MessageType   string     `json:"message_type,omitempty"`
	MinConfidence *float64   `json:"min_confidence,omitempty"`
	Since         *time.Time `json:"since,omitempty"`
}

// RankingProfile is the plan's ranking_profile: a profile name or custom
// weights. Weights left out take the plan's defaults (similarity 0.5,
// decay 0.3, confidence 0.2, half-life 168 hours).
type RankingProfile struct {
	Name    string
	Weights *PlanWeights
}

// PlanWeights are custom weights as the implementation plan names them.
type PlanWeights struct {
	SimilarityWeight   *float64 `json:"similarity_weight,omitempty"`
	DecayWeight        *float64 `json:"decay_weight,omitempty"`
	ConfidenceWeight   *float64 `json:"confidence_weight,omitempty"`
	DecayHalfLifeHours *float64 `json:"decay_half_life_hours,omitempty"`
}

// UnmarshalJSON takes a JSON string (a profile name) or an object of
// PlanWeights; unknown weight names are refused.
func (r *RankingProfile) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &r.Name); err == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	r.Weights = &PlanWeights{}
	if err := dec.Decode(r.Weights); err != nil {
		return invalid("ranking_profile", "must be a profile name or an object of similarity_weight, decay_weight, confidence_weight and decay_half_life_hours: %v", err)
	}
	return nil
}

// MarshalJSON writes the name or the weights.
func (r RankingProfile) MarshalJSON() ([]byte, error) {
	if r.Weights != nil {
		return json.Marshal(r.Weights)
	}
	return json.Marshal(r.Name)
}

// merge folds the plan's filters and ranking_profile into the flat fields.
func (s SpecFilters) merge(into *SearchSpec) error {
	for _, f := range []struct {
		name       string
		given, set bool
	}{
		{"channel_ids", s.ChannelIDs != nil, into.Channels != nil},
		{"sender_ids", s.SenderIDs != nil, into.Senders != nil},
		{"message_type", s.MessageType != "", into.Types != nil},
		{"min_confidence", s.MinConfidence != nil, into.MinConfidence != 0},
		{"since", s.Since != nil, into.Since != nil},
	} {
		if f.given && f.set {
			return invalid("filters."+f.name, "is also given as a top-level filter; give it once")
		}
	}
	if s.ChannelIDs != nil {
		into.Channels = s.ChannelIDs
	}
	if s.SenderIDs != nil {
		into.Senders = s.SenderIDs
	}
	if s.MessageType != "" {
		into.Types = []string{s.MessageType}
	}
	if s.MinConfidence != nil {
		c := *s.MinConfidence
		if math.IsNaN(c) || c < 0 || c > 1 {
			return invalid("filters.min_confidence", "must be from 0 to 1, got %v", c)
		}
		into.MinConfidence = c
	}
	if s.Since != nil {
		into.Since = s.Since
	}
	return nil
}

func (r RankingProfile) merge(into *SearchSpec) error {
	if into.Profile != "" || into.Weights != nil {
		return invalid("ranking_profile", "give either ranking_profile or profile and weights, not both")
	}
	if r.Weights == nil {
		into.Profile = r.Name
		return nil
	}
	or := func(p *float64, def float64) float64 {
		if p == nil {
			return def
		}
		return *p
	}
	w := r.Weights
	into.Weights = &Weights{
		Similarity: or(w.SimilarityWeight, 0.5), Recency: or(w.DecayWeight, 0.3),
		Confidence: or(w.ConfidenceWeight, 0.2), HalfLifeHours: or(w.DecayHalfLifeHours, 168),
	}
	return nil
}

// Weights are custom ranking weights and half-life; absent weights are 0.
type Weights struct {
	Similarity    float64 `json:"similarity,omitempty"`
	Recency       float64 `json:"recency,omitempty"`
	Confidence    float64 `json:"confidence,omitempty"`
	HalfLifeHours float64 `json:"half_life_hours,omitempty"`
}

// MaxLimit bounds a SearchSpec's limit, the same on every surface (the Go
// API allows up to engine.MaxLimit). Its hours (max_age_hours,
// weights.half_life_hours) are bounded by engine.MaxHours and its query by
// engine.MaxQueryBytes.
const MaxLimit = 1000

// Request validates s and returns the engine.SearchRequest it stands for:
// every rule a search checks is checked here (engine.SearchRequest.Validate
// for the engine's own), before any engine is opened, and errors are
// *engine.InvalidError naming the JSON field. CLI, HTTP and MCP all build a
// SearchSpec, so they accept and reject the same searches.
func (s SearchSpec) Request() (engine.SearchRequest, error) {
	if s.Filters != nil {
		if err := s.Filters.merge(&s); err != nil {
			return engine.SearchRequest{}, err
		}
	}
	if s.RankingProfile != nil {
		if err := s.RankingProfile.merge(&s); err != nil {
			return engine.SearchRequest{}, err
		}
	}
	if s.Limit < 0 || s.Limit > MaxLimit {
		return engine.SearchRequest{}, invalid("limit", "must be from 1 to %d (0 means %d), got %d", MaxLimit, engine.DefaultSearchLimit, s.Limit)
	}
	maxAge, err := specHours("max_age_hours", s.MaxAgeHours)
	if err != nil {
		return engine.SearchRequest{}, err
	}
	if s.MinWordCount < 0 {
		return engine.SearchRequest{}, invalid("min_word_count", "must be >= 0, got %d", s.MinWordCount)
	}
	req := engine.SearchRequest{
		Query: s.Query, Limit: s.Limit, Mode: engine.SearchMode(s.Mode), Fusion: engine.Fusion(s.Fusion), MinScore: s.MinScore,
		Ranking: engine.Ranking{Profile: s.Profile, StaleFactor: s.DemoteStale},
		Filter: engine.Filter{
			ChannelIDs: s.Channels, ChannelTypes: s.ChannelTypes, SenderIDs: s.Senders,
			ExcludeSender: s.ExcludeSender, Project: s.Project, MessageTypes: s.Types,
			MinConfidence: s.MinConfidence, HasBreadcrumbs: s.HasBreadcrumbs,
			MinWordCount: s.MinWordCount, Where: s.Where, MaxAge: maxAge,
			UnreadBy: s.UnreadBy, BreadcrumbsValid: s.BreadcrumbsValid,
			IncludeSuperseded: s.IncludeSuperseded,
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
		case "", engine.ProfileCustom:
			req.Ranking.Profile = engine.ProfileCustom
		default:
			return engine.SearchRequest{}, customOnly(p)
		}
		halfLife, err := specHours("weights.half_life_hours", w.HalfLifeHours)
		if err != nil {
			return engine.SearchRequest{}, err
		}
		req.Ranking.Similarity, req.Ranking.Recency, req.Ranking.Confidence = w.Similarity, w.Recency, w.Confidence
		req.Ranking.HalfLife = halfLife
	}
	// The rest (mode, fusion, profile, weights, filters) is the search's
	// own first step.
	if err := req.Validate(); err != nil {
		return engine.SearchRequest{}, err
	}
	return req, nil
}

// specHours checks a number of hours against engine.MaxHours and returns
// it as a duration.
func specHours(field string, h float64) (time.Duration, error) {
	if math.IsNaN(h) || h < 0 || h > engine.MaxHours {
		return 0, invalid(field, "must be a number of hours from 0 to %.0f, got %v", float64(engine.MaxHours), h)
	}
	return time.Duration(h * float64(time.Hour)), nil
}

// customOnly is the error of weights given with another profile than
// custom, worded as the engine words it for a Ranking.
func customOnly(profile string) error {
	return invalid("profile", "weights and a half-life make a custom profile; do not combine them with profile %q", profile)
}

func invalid(field, format string, args ...any) error {
	return &engine.InvalidError{Field: field, Rule: fmt.Sprintf(format, args...)}
}
