package engine

import (
	"testing"
	"time"
)

// The sender boost lifts the named sender's messages past close ones,
// never lowers a relevance, keeps it in [0,1], and does not make a message
// without evidence relevant.
func TestBoostSender(t *testing.T) {
	b := queryBoosts{named: map[string]bool{"caroline": true}}
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
		x := b.apply(c.boosted, "Caroline", at)
		o := b.apply(c.other, "Melanie", at)
		if (x > o) != c.wantBoostedWins {
			t.Errorf("%s: boosted %v -> %v, other %v -> %v", c.name, c.boosted, x, c.other, o)
		}
		if x < c.boosted || o != c.other || x < 0 || x > 1 {
			t.Errorf("%s: %v -> %v, other %v -> %v", c.name, c.boosted, x, c.other, o)
		}
	}
	if got := b.apply(0.01, "Caroline", at); got > 0.02 {
		t.Errorf("a message without evidence boosted to %v", got)
	}
	if got := (queryBoosts{}).apply(0.42, "Melanie", at); got != 0.42 {
		t.Errorf("no sender named: relevance changed to %v", got)
	}
	// A measured boost replaces senderBoost: 0.2 lifts 0.45 past 0.6,
	// which the default does not.
	wide := queryBoosts{named: b.named, senderBoost: 0.2}
	if x, o := wide.apply(0.45, "Caroline", at), wide.apply(0.6, "Melanie", at); x <= o {
		t.Errorf("boost 0.2: boosted 0.45 -> %v does not beat 0.6 -> %v", x, o)
	}
	if x, o := b.apply(0.45, "Caroline", at), b.apply(0.6, "Melanie", at); x >= o {
		t.Errorf("default boost: boosted 0.45 -> %v beats 0.6 -> %v", x, o)
	}
}

// Questions in words get the question weight; queries of keywords, code
// searches phrased "how to ..." and short fragments do not.
func TestQueryShape(t *testing.T) {
	for _, c := range []struct {
		query    string
		question bool
	}{
		{"When did Caroline go to the LGBTQ support group?", true},
		{"What did Caroline research?", true},
		{"research?", true},
		{"  does it work ?  ", true},
		{"what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft .", true},
		{"how do i clear python cache", true},
		{"What's the plan for Friday", true},
		{"how to make a 2d array with booleans in python", false},
		{"python check if a variable is iterable", false},
		{"what is bm25", false}, // three words: a fragment
		{"adoption agencies", false},
		{"", false},
		{"A man is playing a guitar.", false},
	} {
		if got := isQuestion(c.query); got != c.question {
			t.Errorf("isQuestion(%q) = %v, want %v", c.query, got, c.question)
		}
		want := KeywordWeight
		if c.question {
			want = QuestionKeywordWeight
		}
		if got := keywordWeight(c.query, QueryAnalysis{}); got != want {
			t.Errorf("keywordWeight(%q) = %v, want %v", c.query, got, want)
		}
		if got := keywordWeight(c.query, QueryAnalysis{NoQuestionWeight: true}); got != KeywordWeight {
			t.Errorf("keywordWeight(%q) with NoQuestionWeight = %v, want %v", c.query, got, KeywordWeight)
		}
		if c.question {
			if got := keywordWeight(c.query, QueryAnalysis{QuestionKeywordWeight: 0.4}); got != 0.4 {
				t.Errorf("keywordWeight(%q) with QuestionKeywordWeight 0.4 = %v", c.query, got)
			}
		}
	}
}
