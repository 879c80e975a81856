package engine

import (
	"testing"
	"time"
)

// The sender boost orders candidates exactly as adding senderBoost to the
// named sender's relevance would, at the top of the list too, and keeps
// every relevance in [0,1].
func TestBoostSenderOrdersLikeAddition(t *testing.T) {
	b := queryBoosts{named: map[string]bool{"caroline": true}}
	var at time.Time
	cases := []struct {
		name            string
		boosted, other  float64
		wantBoostedWins bool
	}{
		{"near the top: 0.81+0.1 beats 0.9", 0.81, 0.9, true},
		{"at the top: 0.95+0.1 beats 1", 0.95, 1, true},
		{"too far behind: 0.7+0.1 loses to 0.9", 0.7, 0.9, false},
		{"low scores: 0.2+0.1 beats 0.25", 0.2, 0.25, true},
	}
	for _, c := range cases {
		x := b.apply(c.boosted, "Caroline", at)
		o := b.apply(c.other, "Melanie", at)
		if (x > o) != c.wantBoostedWins {
			t.Errorf("%s: boosted %v -> %v, other %v -> %v", c.name, c.boosted, x, c.other, o)
		}
		if x < 0 || x > 1 || o < 0 || o > 1 {
			t.Errorf("%s: out of [0,1]: %v %v", c.name, x, o)
		}
	}
	if got := (queryBoosts{}).apply(0.42, "Melanie", at); got != 0.42 {
		t.Errorf("no sender named: relevance changed to %v", got)
	}
	// A measured boost replaces senderBoost: 0.7+0.2 beats 0.85.
	wide := queryBoosts{named: b.named, senderBoost: 0.2}
	if x, o := wide.apply(0.7, "Caroline", at), wide.apply(0.85, "Melanie", at); x <= o {
		t.Errorf("boost 0.2: boosted 0.7 -> %v does not beat 0.85 -> %v", x, o)
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
