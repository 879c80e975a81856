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

// Query is a user's text split and tokenized once: its plain terms (Terms)
// and, for each term, the stemmed tokens FTS5's 'porter unicode61' makes of
// it. Every step of a search (pruning, FTS5 or in-memory ranking, snippets)
// reads the same Query, so the text is never split twice. The zero Query
// has no terms and matches nothing.
type Query struct {
	terms []string
	// tokens[i] are the stemmed tokens of terms[i] (usually one; none for
	// a term of separators only to the tokenizer, several for a term FTS5
	// reads as a phrase).
	tokens [][]string
}

// ParseQuery splits text into its plain terms (see Terms) and stems them.
func ParseQuery(text string) Query {
	return queryOf(Terms(text))
}

func queryOf(terms []string) Query {
	q := Query{terms: terms, tokens: make([][]string, len(terms))}
	var buf, sbuf []byte
	for i, term := range terms {
		buf = tokenize(term, buf, func(tok []byte, _, _ int) {
			sbuf = porterStem(tok, sbuf)
			q.tokens[i] = append(q.tokens[i], string(sbuf))
		})
	}
	return q
}

// Terms returns the query's distinct plain terms in order (do not modify).
func (q Query) Terms() []string { return q.terms }

// Empty reports whether the query has no terms (it then matches nothing).
func (q Query) Empty() bool { return len(q.terms) == 0 }

// String is the query's terms separated by spaces.
func (q Query) String() string { return strings.Join(q.terms, " ") }

// match is the FTS5 MATCH expression of the query (see Match).
func (q Query) match() string { return MatchTerms(q.terms) }

// keep returns the query with only the terms i for which keep(i) is true.
func (q Query) keep(keep func(i int) bool) Query {
	var out Query
	for i, t := range q.terms {
		if keep(i) {
			out.terms = append(out.terms, t)
			out.tokens = append(out.tokens, q.tokens[i])
		}
	}
	return out
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
