package engine

import (
	"context"
	"strings"
	"unicode"
)

// senderMentions finds the capitalized words of query that name a sender
// (an agent) of stored messages, "Caroline's" included. It returns query without them
// when another word remains (else query unchanged) and the names found,
// lower-cased (nil when none).
//
// Why: a question about what someone said names them ("What did Caroline
// research?"), but their own messages rarely contain their name, while the
// other side's replies do ("Wow, Caroline!"). Kept in the query, the name
// pulls both the keyword and the semantic side to the replies; taken out,
// the rest of the question finds the turn, and the named sender's own
// messages get a small boost (senderBoost). Measured on the LoCoMo dev
// conversations in bench/README.md.
func (e *Engine) senderMentions(ctx context.Context, query string) (string, map[string]bool, error) {
	type word struct {
		start, end int // query[start:end], possessive included
		key        string
		proper     bool // capitalized, as a name is
	}
	var words []word
	rs := []rune(query)
	for i := 0; i < len(rs); {
		if !unicode.IsLetter(rs[i]) && !unicode.IsDigit(rs[i]) {
			i++
			continue
		}
		j := i
		for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]) || rs[j] == '-' || rs[j] == '_') {
			j++
		}
		w := word{start: i, end: j, key: strings.ToLower(string(rs[i:j])), proper: unicode.IsUpper(rs[i])}
		if j+1 < len(rs) && (rs[j] == '\'' || rs[j] == '’') && (rs[j+1] == 's' || rs[j+1] == 'S') && (j+2 == len(rs) || !unicode.IsLetter(rs[j+2])) {
			w.end = j + 2
		}
		words = append(words, w)
		i = w.end
	}
	if len(words) < 2 {
		return query, nil, nil
	}
	// Only capitalized words count as names, so an agent called like a
	// common word ("bench", "review") does not take that word out of
	// ordinary queries.
	seen := map[string]bool{}
	var args []any
	for _, w := range words {
		if w.proper && !seen[w.key] {
			seen[w.key] = true
			args = append(args, w.key)
		}
	}
	if len(args) == 0 {
		return query, nil, nil
	}
	names, err := e.agentNamesAmong(ctx, args)
	if err != nil {
		return "", nil, err
	}
	if len(names) == 0 {
		return query, nil, nil
	}
	var b strings.Builder
	last, kept := 0, 0
	for _, w := range words {
		if w.proper && names[w.key] {
			b.WriteString(string(rs[last:w.start]))
			last = w.end
		} else {
			kept++
		}
	}
	if kept == 0 {
		return query, names, nil
	}
	b.WriteString(string(rs[last:]))
	return strings.Join(strings.Fields(b.String()), " "), names, nil
}

// senderBoost is added to the relevance of the messages of a sender the
// query names: on the LoCoMo dev conversations 0.1 was best of 0.05, 0.1
// and 0.2 (bench/README.md).
const senderBoost = 0.1

// boostSender raises the relevance of a message whose sender the query
// named: (fused + senderBoost) / (1 + senderBoost), which keeps it in [0,1]
// and orders like adding senderBoost.
func boostSender(fused float64, sender string, named map[string]bool) float64 {
	if !named[strings.ToLower(sender)] {
		return fused
	}
	return (fused + senderBoost) / (1 + senderBoost)
}
