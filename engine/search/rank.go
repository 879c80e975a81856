package search

import (
	"math"
	"time"
)

// Weights say how a result's final score combines its relevance (in
// [0,1]) with its recency and confidence:
//
//	final = Similarity*relevance + Recency*recency + Confidence*confidence
//	recency = exp(-ln 2 * age_hours / half_life_hours)   (1 without decay)
//
// or, when Multiplicative, relevance * confidence * 0.95^age_days. The
// engine's ranking profiles resolve to Weights.
type Weights struct {
	Similarity, Recency, Confidence float64
	// HalfLife is the recency's half-life; 0 means no decay.
	HalfLife time.Duration
	// Multiplicative ranks by relevance * confidence * 0.95^age_days.
	Multiplicative bool
}

// Recency is exp(-ln2 * age / halfLife), 1 without decay (halfLife 0);
// future timestamps count as age 0.
func Recency(age, halfLife time.Duration) float64 {
	if halfLife <= 0 {
		return 1
	}
	if age < 0 {
		age = 0
	}
	return math.Exp(-math.Ln2 * age.Hours() / halfLife.Hours())
}

// Final combines relevance, confidence and age by w: the recency and the
// final score.
func (w Weights) Final(relevance, confidence float64, age time.Duration) (recency, final float64) {
	if w.Multiplicative {
		recency = multiplicativeDecay(age)
		return recency, relevance * confidence * recency
	}
	recency = Recency(age, w.HalfLife)
	return recency, w.Similarity*relevance + w.Recency*recency + w.Confidence*confidence
}

// ListingRecency is the recency reported by a filter-only listing: w's
// decay, or a week's half-life when w has none.
func (w Weights) ListingRecency(age time.Duration) float64 {
	switch {
	case w.Multiplicative:
		return multiplicativeDecay(age)
	case w.HalfLife > 0:
		return Recency(age, w.HalfLife)
	}
	return Recency(age, 168*time.Hour)
}

// multiplicativeDecay is 0.95^age_days, 1 for a future timestamp.
func multiplicativeDecay(age time.Duration) float64 {
	return math.Pow(0.95, max(age.Hours()/24, 0))
}
