package engine_test

import (
	"math"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
)

// TestRankingScore: Score is the profile's formula (quality: relevance
// .4, recency .1 with a 720-hour half-life, confidence .5) and refuses
// what a search refuses.
func TestRankingScore(t *testing.T) {
	got, err := engine.Ranking{Profile: engine.ProfileQuality}.Score(0.5, 0.8, 720*time.Hour)
	if want := 0.4*0.5 + 0.1*0.5 + 0.5*0.8; err != nil || math.Abs(got-want) > 1e-12 {
		t.Errorf("quality score = %v, %v; want %v", got, err, want)
	}
	if got, err := (engine.Ranking{}).Score(0.7, 0.1, time.Hour); err != nil || got != 0.7 {
		t.Errorf("default (similarity) score = %v, %v; want 0.7", got, err)
	}
	if _, err := (engine.Ranking{Profile: "loudest"}).Score(1, 1, 0); err == nil {
		t.Error("unknown profile accepted")
	}
}
