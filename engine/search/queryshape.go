package search

import (
	"strings"
	"time"
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

// NameMentions is a query read for the senders it may name: a question
// about what someone said names them ("What did Caroline research?"), but
// their own messages rarely contain their name, while the other side's
// replies do ("Wow, Caroline!"). Kept in the query, the name pulls both
// the keyword and the semantic side to the replies; taken out (Without),
// the rest of the question finds the turn, and the named sender's own
// messages get a small boost (SenderBoost). Measured on the LoCoMo dev
// conversations in bench/README.md.
type NameMentions struct {
	query string
	runes []rune
	words []nameWord
}

// nameWord is one word of a query: runes[start:end], possessive included.
type nameWord struct {
	start, end int
	key        string // lower-cased, without the possessive
	proper     bool   // capitalized, as a name is
}

// ReadNames splits query into its words ("Caroline's" is the word
// caroline).
func ReadNames(query string) NameMentions {
	m := NameMentions{query: query, runes: []rune(query)}
	rs := m.runes
	for i := 0; i < len(rs); {
		if !unicode.IsLetter(rs[i]) && !unicode.IsDigit(rs[i]) {
			i++
			continue
		}
		j := i
		for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]) || rs[j] == '-' || rs[j] == '_') {
			j++
		}
		w := nameWord{start: i, end: j, key: strings.ToLower(string(rs[i:j])), proper: unicode.IsUpper(rs[i])}
		if j+1 < len(rs) && (rs[j] == '\'' || rs[j] == '’') && (rs[j+1] == 's' || rs[j+1] == 'S') && (j+2 == len(rs) || !unicode.IsLetter(rs[j+2])) {
			w.end = j + 2
		}
		m.words = append(m.words, w)
		i = w.end
	}
	return m
}

// Candidates returns the distinct capitalized words, lower-cased, that may
// name a sender; nil for a query of fewer than two words. Only capitalized
// words count as names, so an agent called like a common word ("bench",
// "review") does not take that word out of ordinary queries.
func (m NameMentions) Candidates() []string {
	if len(m.words) < 2 {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, w := range m.words {
		if w.proper && !seen[w.key] {
			seen[w.key] = true
			out = append(out, w.key)
		}
	}
	return out
}

// Without returns the query without its capitalized words that names
// holds (lower-cased), when another word remains; else the query as given.
func (m NameMentions) Without(names map[string]bool) string {
	var b strings.Builder
	last, kept := 0, 0
	for _, w := range m.words {
		if w.proper && names[w.key] {
			b.WriteString(string(m.runes[last:w.start]))
			last = w.end
		} else {
			kept++
		}
	}
	if kept == 0 {
		return m.query
	}
	b.WriteString(string(m.runes[last:]))
	return strings.Join(strings.Fields(b.String()), " ")
}

// SenderBoost is added to the relevance of the messages of a sender the
// query names: on the LoCoMo dev conversations 0.1 was best of 0.05, 0.1
// and 0.2 (bench/README.md).
const SenderBoost = 0.1

// Boosts are what a query names besides its words: senders (NameMentions)
// and times (TimeMentions), and what each earns.
type Boosts struct {
	// Senders are the senders named, lower-cased.
	Senders map[string]bool
	Times   []TimeRange
	// SenderBoost and TimeBoost replace the constants of the same names
	// when not zero (a benchmark measuring other values).
	SenderBoost, TimeBoost float64
}

// Apply raises the relevance of a message whose sender the query named by
// SenderBoost and of one created within a named time by TimeBoost (Boost:
// the boosts earned shift the relevance's log-odds, so a message without
// evidence stays without, and none is ever lowered). A query that names
// nothing leaves relevance as it is.
func (b Boosts) Apply(relevance float64, sender string, created time.Time) float64 {
	earned := 0.0
	if len(b.Senders) > 0 && b.Senders[strings.ToLower(sender)] {
		earned += orDefault(b.SenderBoost, SenderBoost)
	}
	if len(b.Times) > 0 && InRanges(created, b.Times) {
		earned += orDefault(b.TimeBoost, TimeBoost)
	}
	if earned == 0 {
		return relevance
	}
	return Boost(relevance, earned)
}

// orDefault is v, or def when v is zero (a parameter left at its
// measured value).
func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}
