package search_test

import (
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine/search"
)

// The sender boost lifts the named sender's messages past close ones,
// never lowers a relevance, keeps it in [0,1], and does not make a message
// without evidence relevant.
func TestBoostSender(t *testing.T) {
	b := search.Boosts{Senders: map[string]bool{"caroline": true}}
	var at time.Time
	cases := []struct {
		name            string
		boosted, other  float64
		wantBoostedWins bool
	}{
		{"near the middle: 0.45 boosted beats 0.5", 0.45, 0.5, true},
		{"near the top: 0.85 boosted beats 0.88", 0.85, 0.88, true},
		{"too far behind: 0.3 boosted loses to 0.6", 0.3, 0.6, false},
		{"low scores: 0.2 boosted beats 0.22", 0.2, 0.22, true},
	}
	for _, c := range cases {
		x := b.Apply(c.boosted, "Caroline", at)
		o := b.Apply(c.other, "Melanie", at)
		if (x > o) != c.wantBoostedWins {
			t.Errorf("%s: boosted %v -> %v, other %v -> %v", c.name, c.boosted, x, c.other, o)
		}
		if x < c.boosted || o != c.other || x < 0 || x > 1 {
			t.Errorf("%s: %v -> %v, other %v -> %v", c.name, c.boosted, x, c.other, o)
		}
	}
	if got := b.Apply(0.01, "Caroline", at); got > 0.02 {
		t.Errorf("a message without evidence boosted to %v", got)
	}
	if got := (search.Boosts{}).Apply(0.42, "Melanie", at); got != 0.42 {
		t.Errorf("no sender named: relevance changed to %v", got)
	}
	// A measured boost replaces SenderBoost: 0.2 lifts 0.45 past 0.6,
	// which the default does not.
	wide := search.Boosts{Senders: b.Senders, SenderBoost: 0.2}
	if x, o := wide.Apply(0.45, "Caroline", at), wide.Apply(0.6, "Melanie", at); x <= o {
		t.Errorf("boost 0.2: boosted 0.45 -> %v does not beat 0.6 -> %v", x, o)
	}
	if x, o := b.Apply(0.45, "Caroline", at), b.Apply(0.6, "Melanie", at); x >= o {
		t.Errorf("default boost: boosted 0.45 -> %v beats 0.6 -> %v", x, o)
	}
}

// A query's capitalized words are the candidate names (possessives
// folded, each once); taking the known ones out keeps the rest of the
// query, and a query that is only names is kept whole.
func TestNameMentions(t *testing.T) {
	m := search.ReadNames("What did Caroline’s friend tell caroline and Melanie about Caroline?")
	if got := m.Candidates(); len(got) != 3 || got[0] != "what" || got[1] != "caroline" || got[2] != "melanie" {
		t.Errorf("candidates %q", got)
	}
	if got, want := m.Without(map[string]bool{"caroline": true}), "What did friend tell caroline and Melanie about ?"; got != want {
		t.Errorf("without caroline: %q, want %q", got, want)
	}
	if got := search.ReadNames("Caroline").Candidates(); got != nil {
		t.Errorf("one word: candidates %q", got)
	}
	only := search.ReadNames("Caroline Melanie")
	if got := only.Without(map[string]bool{"caroline": true, "melanie": true}); got != "Caroline Melanie" {
		t.Errorf("only names: %q", got)
	}
}
