package engine

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/engine/search"
)

// Ranking profiles.
const (
	ProfileBalanced       = "balanced"       // half-life 168 h; similarity .34, recency .33, confidence .33
	ProfileRecent         = "recent"         // half-life 24 h; .3 / .6 / .1
	ProfileQuality        = "quality"        // half-life 720 h; .4 / .1 / .5
	ProfileSimilarity     = "similarity"     // relevance only, no decay
	ProfileMultiplicative = "multiplicative" // relevance x confidence x 0.95^age_days
	ProfileCustom         = "custom"         // Ranking's weights and half-life
)

// DefaultProfile is the profile of a zero Ranking: relevance only, so that
// a plain search ranks by what it matched; recency and confidence are
// opt-in profiles.
const DefaultProfile = ProfileSimilarity

// Profiles lists the profile names.
func Profiles() []string {
	return []string{ProfileBalanced, ProfileRecent, ProfileQuality, ProfileSimilarity, ProfileMultiplicative, ProfileCustom}
}

// Ranking says how a result's final score combines its relevance (the
// mode's similarity: semantic similarity, keyword score or the fused
// score, in [0,1]) with its recency and confidence: a profile's weights,
// or custom ones, in the formula of search.Weights (ProfileMultiplicative:
// relevance * confidence * 0.95^age_days).
type Ranking struct {
	// Profile is one of Profiles(); "" means DefaultProfile, or
	// ProfileCustom when any weight or HalfLife is set.
	Profile string `json:"profile,omitempty"`
	// Weights and half-life of ProfileCustom (each weight >= 0, not all 0,
	// used divided by their sum; HalfLife 0 means no decay).
	Similarity float64       `json:"similarity,omitempty"`
	Recency    float64       `json:"recency,omitempty"`
	Confidence float64       `json:"confidence,omitempty"`
	HalfLife   time.Duration `json:"half_life,omitempty"`
	// StaleFactor, when above 0, multiplies the final score of messages
	// whose breadcrumbs the marks cache says changed or are gone at the
	// repository's HEAD (engine/crumbmarks.go): at most 1; 0 demotes
	// nothing. It applies to searches with a query, not to listings.
	StaleFactor float64 `json:"stale_factor,omitempty"`
}

// resolve returns the effective ranking with its profile's weights. Its
// errors name the JSON fields of a search (profile, weights.*), the one
// naming every surface shares.
func (r Ranking) resolve() (Ranking, error) {
	custom := r.Similarity != 0 || r.Recency != 0 || r.Confidence != 0 || r.HalfLife != 0
	p := strings.ToLower(strings.TrimSpace(r.Profile))
	if p == "" {
		p = DefaultProfile
		if custom {
			p = ProfileCustom
		}
	}
	if custom && p != ProfileCustom {
		return r, customOnly(p)
	}
	if math.IsNaN(r.StaleFactor) || r.StaleFactor < 0 || r.StaleFactor > 1 {
		return r, invalid("demote_stale", "must be a factor from 0 (off) to 1, got %v", r.StaleFactor)
	}
	out := Ranking{Profile: p, StaleFactor: r.StaleFactor}
	switch p {
	case ProfileBalanced:
		out.Similarity, out.Recency, out.Confidence, out.HalfLife = 0.34, 0.33, 0.33, 168*time.Hour
	case ProfileRecent:
		out.Similarity, out.Recency, out.Confidence, out.HalfLife = 0.3, 0.6, 0.1, 24*time.Hour
	case ProfileQuality:
		out.Similarity, out.Recency, out.Confidence, out.HalfLife = 0.4, 0.1, 0.5, 720*time.Hour
	case ProfileSimilarity:
		out.Similarity = 1
	case ProfileMultiplicative:
	case ProfileCustom:
		for _, w := range []struct {
			field string
			v     float64
		}{{"weights.similarity", r.Similarity}, {"weights.recency", r.Recency}, {"weights.confidence", r.Confidence}} {
			if math.IsNaN(w.v) || math.IsInf(w.v, 0) || w.v < 0 {
				return r, invalid(w.field, "must be a finite number >= 0, got %v", w.v)
			}
		}
		if r.Similarity+r.Recency+r.Confidence == 0 {
			return r, invalid("weights", "custom weights must not all be 0")
		}
		if r.HalfLife < 0 {
			return r, invalid("weights.half_life_hours", "must not be negative, got %s", r.HalfLife)
		}
		// Normalized by their sum, as the designs combine them: a final
		// score stays in [0,1] and weights 2/1/1 rank as 0.5/0.25/0.25.
		sum := r.Similarity + r.Recency + r.Confidence
		out.Similarity, out.Recency, out.Confidence, out.HalfLife = r.Similarity/sum, r.Recency/sum, r.Confidence/sum, r.HalfLife
	default:
		if !slices.Contains(Profiles(), p) {
			return r, invalid("profile", "must be one of %s, got %q", strings.Join(Profiles(), ", "), r.Profile)
		}
	}
	return out, nil
}

// customOnly is the error of weights given with another profile than
// custom.
func customOnly(profile string) error {
	return invalid("profile", "weights and a half-life make a custom profile; do not combine them with profile %q", profile)
}

// weights are the formula of a resolved ranking (search.Weights).
func (r Ranking) weights() search.Weights {
	return search.Weights{Similarity: r.Similarity, Recency: r.Recency, Confidence: r.Confidence,
		HalfLife: r.HalfLife, Multiplicative: r.Profile == ProfileMultiplicative}
}

// Score is the final score of a message of the given relevance (0 to 1),
// confidence and age under r: the formula a search ranks its results
// with, for callers that rank candidates they found otherwise (a
// session-start briefing lists a project's records without a query).
func (r Ranking) Score(relevance, confidence float64, age time.Duration) (float64, error) {
	res, err := r.resolve()
	if err != nil {
		return 0, err
	}
	_, fin := res.weights().Final(relevance, confidence, age)
	return fin, nil
}
