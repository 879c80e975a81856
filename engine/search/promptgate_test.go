package search_test

import (
	"math"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine/search"
)

// PromptCoverage counts the prompt's content words, stemmed, that some
// text holds: function words do not count, a prompt without content words
// is covered, only the first 2 KB of a text is read and only the prompt's
// first 16 content words count.
func TestPromptCoverage(t *testing.T) {
	notes := []string{"Invoices are immutable: correct them with a credit note", "Deploys run on Fridays"}
	for _, c := range []struct {
		prompt string
		texts  []string
		want   float64
	}{
		{"How do I correct an invoice?", notes, 1},                   // invoice ~ invoices; how, do, i, an left out
		{"How do I correct a wrong invoice?", notes, 2.0 / 3},        // wrong is not held
		{"What did Melanie paint on Friday?", notes, 1.0 / 3},        // friday ~ fridays
		{"What did Melanie paint?", nil, 0},                          // nothing found
		{"what is it?", nil, 1},                                      // no content word
		{"", notes, 1},                                               // no word at all
		{"zebra", []string{strings.Repeat("x ", 1500) + "zebra"}, 0}, // past the first 2 KB
		{"why does the invoice export fail? qz e1 e2 e3 e4 e5 e6 e7 e8 e9 e10 e11 e12 e13 e14 e15 e16 e17 e18",
			[]string{"invoice export fails: e1 e2 e3 e4 e5 e6 e7 e8 e9 e10 e11 e12"}, 15.0 / 16}, // the first 16 content words only
	} {
		if got := search.PromptCoverage(c.prompt, c.texts); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("PromptCoverage(%q) = %v, want %v", c.prompt, got, c.want)
		}
	}
}

// PromptEvidence is the best relevance discounted by the coverage: at full
// coverage the relevance itself, never more, monotone in both, 0 without
// either.
func TestPromptEvidence(t *testing.T) {
	if got := search.PromptEvidence(0.3, 1); got != 0.3 {
		t.Errorf("full coverage: %v, want 0.3", got)
	}
	if search.PromptEvidence(0.3, 0) != 0 || search.PromptEvidence(0, 1) != 0 || search.PromptEvidence(math.NaN(), 1) != 0 {
		t.Error("no coverage or no relevance must give 0")
	}
	prev := 0.0
	for _, c := range []float64{0.1, 0.3, 0.5, 0.7, 1, 2} {
		got := search.PromptEvidence(0.5, c)
		if got < prev || got > 0.5 {
			t.Errorf("coverage %v: %v after %v", c, got, prev)
		}
		prev = got
	}
	if search.DefaultPromptEvidence >= search.DefaultFloor {
		t.Errorf("a fully covered prompt must be judged by the floor alone: gate %v, floor %v", search.DefaultPromptEvidence, search.DefaultFloor)
	}
}

// BenchmarkPromptCoverage: a prompt against the 50 results a per-prompt
// recall reads, 400 bytes each.
func BenchmarkPromptCoverage(b *testing.B) {
	texts := make([]string, 50)
	for i := range texts {
		texts[i] = strings.Repeat("the refund worker retries failed refunds after the invoice export ", 7)[:400]
	}
	const prompt = "Why did the nightly invoice export fail again after the deploy on Friday?"
	b.ReportAllocs()
	for b.Loop() {
		search.PromptCoverage(prompt, texts)
	}
}
