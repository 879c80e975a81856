package engine

import (
	"testing"
)

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
