package fts

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTerms is the largest number of distinct terms Match puts in a query.
const MaxTerms = 64

// maxTermBytes bounds one term; FTS5 tokens longer than this are not useful
// and a huge term only costs time.
const maxTermBytes = 256

// isTermRune reports whether r belongs to a term: letters, digits,
// combining marks and private-use characters (unicode61's default token
// classes "L* N* Co", plus marks so accented words written with combining
// characters stay one term).
func isTermRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) ||
		unicode.IsMark(r) || unicode.Is(unicode.Co, r)
}

// Terms splits text into the distinct plain terms a search looks for, in
// order of first appearance, lower-cased. Invalid UTF-8 bytes are separators.
// At most MaxTerms terms are returned.
func Terms(text string) []string {
	var terms []string
	seen := make(map[string]bool)
	start := -1
	flush := func(end int) bool {
		if start < 0 {
			return true
		}
		t := strings.ToLower(text[start:end])
		start = -1
		if len(t) > maxTermBytes {
			t = t[:maxTermBytes]
			for !utf8.ValidString(t) {
				t = t[:len(t)-1]
			}
		}
		if t == "" || seen[t] {
			return true
		}
		seen[t] = true
		terms = append(terms, t)
		return len(terms) < MaxTerms
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size <= 1 || !isTermRune(r) {
			if !flush(i) {
				return terms
			}
		} else if start < 0 {
			start = i
		}
		i += size
	}
	flush(len(text))
	return terms
}

// Match returns the FTS5 MATCH expression that finds documents containing
// any of text's plain terms, or "" when text has no terms (then nothing can
// match and callers should not run the query).
func Match(text string) string {
	return MatchTerms(Terms(text))
}

// MatchTerms is Match for terms already split by Terms.
func MatchTerms(terms []string) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(t, `"`, `""`))
		b.WriteByte('"')
	}
	return b.String()
}
