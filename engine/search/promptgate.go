package search

import (
	"math"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/fts"
)

// The prompt gate: whether a per-prompt recall injects anything at all.
//
// The relevance floor judges one result at a time, and a prompt about
// something the memory does not hold still finds messages above it: in a
// store of everyday conversation, a question about someone the store never
// mentions matches the turns about the same kind of event. Recall is
// unasked for, so before injecting it also asks how much of the prompt the
// messages found mention at all (PromptCoverage): what is relevant to a
// prompt shares its content words, above all its names. The gate's measure
// (PromptEvidence) is the best relevance found, discounted by that
// coverage.
//
// Chosen on the LoCoMo dev conversations, leaving each out in turn
// (bench/README.md, "What the agent is given"): the exponent and the
// threshold are the middle of the widest window in which every
// conversation keeps the evidence for 90% of the questions whose evidence
// hybrid search ranks in its top 10 and injects nothing for 70% of the
// prompts about another conversation.
const (
	// PromptCoverageExponent is the power of the coverage in
	// PromptEvidence: a prompt a third of whose content words the messages
	// found never mention needs 2.25 times the relevance.
	PromptCoverageExponent = 2.0
	// DefaultPromptEvidence is the PromptEvidence below which a per-prompt
	// recall injects nothing. Below the relevance floor (DefaultFloor): a
	// prompt whose every content word the memory mentions is judged by the
	// floor alone.
	DefaultPromptEvidence = 0.016
	// promptCoverageTextBytes bounds the part of each message coverage
	// reads, so that its cost stays bounded on long session chunks.
	promptCoverageTextBytes = 2048
	// promptCoverageTerms bounds the prompt's content words coverage
	// counts, the first ones: a long prompt's opening (its question, above
	// a pasted log or file) says what it is about, and the words of a
	// pasted log are rarely in any memory. No LoCoMo dev question has more
	// than 14.
	promptCoverageTerms = 16
)

// PromptCoverage is the share of prompt's first 16 distinct content terms
// (its terms but the English function words, stemmed as the keyword index
// stems them) that at least one of texts holds, reading the first 2 KB of
// each; 1 for a prompt without content terms. Function words are left out
// because a terse note holds few of them whatever it is about.
func PromptCoverage(prompt string, texts []string) float64 {
	missing := map[string]bool{}
	for _, t := range fts.Terms(prompt) {
		if functionWord(t) {
			continue
		}
		if len(missing) == promptCoverageTerms {
			break
		}
		stems, _, _ := fts.DocTerms(t)
		for _, s := range stems {
			missing[s] = true
		}
	}
	n := len(missing)
	if n == 0 {
		return 1
	}
	for _, text := range texts {
		fts.DropHeld(head(text, promptCoverageTextBytes), missing)
		if len(missing) == 0 {
			break
		}
	}
	return float64(n-len(missing)) / float64(n)
}

// functionWord reports whether the lower-cased term t is an English
// function word: articles, pronouns, auxiliaries, prepositions,
// conjunctions and question words, which say what kind of sentence a
// prompt is rather than what it is about.
func functionWord(t string) bool {
	switch t {
	case "a", "an", "the", "and", "or", "but", "if", "then", "so", "than", "as",
		"i", "me", "my", "we", "us", "our", "you", "your", "he", "him", "his", "she", "her",
		"it", "its", "they", "them", "their", "this", "that", "these", "those",
		"is", "are", "was", "were", "be", "been", "being", "am",
		"do", "does", "did", "done", "have", "has", "had",
		"can", "could", "will", "would", "shall", "should", "may", "might", "must",
		"of", "in", "on", "at", "to", "for", "from", "by", "with", "about", "into", "over", "after", "before",
		"what", "when", "where", "which", "who", "whom", "whose", "why", "how",
		"not", "no", "there", "here", "any", "some", "all", "s", "t":
		return true
	}
	return false
}

// PromptEvidence is what a per-prompt recall weighs before injecting
// anything: best (the largest calibrated relevance its search found) times
// coverage (PromptCoverage) to the power PromptCoverageExponent.
func PromptEvidence(best, coverage float64) float64 {
	return PromptEvidenceWith(best, coverage, PromptCoverageExponent)
}

// PromptEvidenceWith is PromptEvidence with another exponent (the
// benchmark that chooses it).
func PromptEvidenceWith(best, coverage, exponent float64) float64 {
	if !(best > 0) || !(coverage > 0) {
		return 0
	}
	return min(best, 1) * math.Pow(min(coverage, 1), exponent)
}

// head is s cut to at most n bytes on a rune boundary.
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
