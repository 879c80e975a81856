package search

import (
	"strings"
	"unicode"
)

// interrogatives are the words a question in words starts with.
var interrogatives = map[string]bool{
	"what": true, "when": true, "where": true, "who": true, "whom": true, "whose": true, "which": true, "why": true, "how": true,
	"did": true, "does": true, "do": true, "is": true, "are": true, "was": true, "were": true,
	"can": true, "could": true, "has": true, "have": true, "had": true, "will": true, "would": true, "should": true,
}

// IsQuestion reports whether query is shaped as a question in words: it
// ends with a question mark, or it has at least four words and starts
// with an interrogative not followed by "to" ("what are the structural
// problems of ..." is a question; "how to read a file python" is a query
// of keywords, as typed into a web search engine).
func IsQuestion(query string) bool {
	q := strings.TrimSpace(query)
	if strings.HasSuffix(q, "?") {
		return true
	}
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) // "what's" gives "what", "s"
	})
	return len(words) >= 4 && interrogatives[words[0]] && words[1] != "to"
}
