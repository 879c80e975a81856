package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/engine"
)

func searchCommand() *command {
	return &command{
		name:    "search",
		summary: "find messages by meaning and keyword (hybrid), filtered first; no QUERY lists the newest",
		usage:   "[--mode hybrid|semantic|keyword] [--profile NAME | --w-similarity X --w-recency X --w-confidence X --half-life-hours H] [--channel ID]... [--channel-type T]... [--sender NAME]... [--exclude-sender NAME] [--project ID] [--type T]... [--min-confidence X] [--max-age-days N] [--since T] [--until T] [--has-breadcrumbs true|false] [--min-words N] [--where JSON] [--model DIR] [--limit N] [--json] [QUERY]",
		examples: []string{
			`cairn search "sqlite busy timeout"`,
			`cairn search --limit 5 "wal mode" --json`,
			`cairn search --channel project:cairn:decisions --min-confidence 0.7 --max-age-days 30 storage`,
			`cairn search --sender claude --type decision            # newest decisions by claude`,
			`cairn search --mode semantic --profile recent "why did the deploy fail"`,
			`cairn search --where '{"$or": [{"word_count": {"$gte": 50}}, {"agent_name": "claude"}]}' --json wal`,
			`cairn search --w-similarity 0.7 --w-confidence 0.3 --half-life-hours 72 schema`,
		},
		readOnly: true,
		run:      runSearch,
	}
}

// oneShotMemoryLimit is the heap size at which a one-shot search turns its
// collector back on.
const oneShotMemoryLimit = 512 << 20

// oneShotGC turns the collector off up to oneShotMemoryLimit in a
// one-shot search process (runSearch says why); GOGC or GOMEMLIMIT set
// in the environment are left to rule.
func (e *env) oneShotGC() {
	if e.wholeProcess && e.getenv("GOGC") == "" && e.getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(oneShotMemoryLimit)
	}
}

func runSearch(ctx context.Context, e *env, c *command, args []string) error {
	// A search process allocates a few tens of MB and exits: collecting
	// them cost about 8 % of its CPU time and freed nothing it needed
	// (the peak resident size is the same without it). The memory limit
	// brings the collector back for a heap that grows past it; GOGC or
	// GOMEMLIMIT set in the environment are left to rule.
	e.oneShotGC()
	fs := newFlagSet(e, c)
	f := addSearchFlags(fs)
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	req, err := f.request(pos)
	if err != nil {
		return err
	}
	return e.withModelEngine(ctx, f.model, forQuery, func(eng *engine.Engine) error {
		resp, err := eng.SearchDetailed(ctx, req)
		if err != nil {
			return err
		}
		e.printSearchNotes(resp)
		if len(resp.Results) == 0 && resp.BelowFloor > 0 {
			// The floor may have silenced what was found: say so, and how
			// to see it anyway.
			if !e.json {
				fmt.Fprintln(e.stdout, "no relevant results")
			}
			fmt.Fprintln(e.stderr, "hint: results less likely relevant than the floor are left out; --min-score 0 or --all shows every result")
			return nil
		}
		return e.printResults(resp.Results)
	})
}

// printSearchNotes says on stderr why a search ran degraded (a hybrid
// search that fell back to keyword, vectors still being built), so that
// --json output stays one object per result.
func (e *env) printSearchNotes(resp engine.SearchResponse) {
	for _, n := range resp.Notes {
		fmt.Fprintf(e.stderr, "note: %s\n", n.Message)
	}
}

// searchLine is one search result as JSON: the message's fields and the scores.
type searchLine struct {
	engine.Message
	Score        float64 `json:"score"`
	KeywordScore float64 `json:"keyword_score"`
	Snippet      string  `json:"snippet,omitempty"`
	// Scores is the breakdown (similarity, keyword, fused, confidence,
	// recency, final); VectorMissing says the message has no vector yet.
	Scores        engine.Scores `json:"scores"`
	VectorMissing bool          `json:"vector_missing,omitempty"`
}

func (e *env) printResults(res []engine.SearchResult) error {
	if e.json {
		for _, r := range res {
			if err := e.printJSON(searchLine{Message: r.Message, Score: r.Score, KeywordScore: r.KeywordScore, Snippet: r.Snippet, Scores: r.Scores, VectorMissing: r.VectorMissing}); err != nil {
				return err
			}
		}
		return nil
	}
	if len(res) == 0 {
		fmt.Fprintln(e.stdout, "no results")
		return nil
	}
	for _, r := range res {
		extra := ""
		if st := scoreText(r); st != "" {
			extra = "  " + st
		}
		text := r.Message.Content
		if r.Snippet != "" {
			text = r.Snippet
		}
		printMessageHeader(e.stdout, r.Message, extra)
		for _, l := range checkLines(r.Message.BreadcrumbCheck) {
			fmt.Fprintf(e.stdout, "    %s\n", l)
		}
		fmt.Fprintf(e.stdout, "%s\n\n", indent(text))
	}
	return nil
}

// scoreText is a result's score for people, two decimals and never an
// exponent: the ranking score and what it came from (keyword and meaning
// relevance, each 0 to 1), or "" for a listing without a query.
func scoreText(r engine.SearchResult) string {
	sc := r.Scores
	if sc.Keyword == 0 && sc.Similarity == 0 && sc.Fused == 0 && r.Snippet == "" {
		return ""
	}
	parts := []string{"score " + twoDecimals(r.Score)}
	if sc.Keyword > 0 {
		parts = append(parts, "keyword "+twoDecimals(sc.Keyword))
	}
	if sc.Similarity > 0 {
		parts = append(parts, "similarity "+twoDecimals(sc.Similarity))
	}
	return strings.Join(parts, " · ")
}

// twoDecimals formats v with two decimals; a positive v too small to show
// is "<0.01" rather than 0.00 or an exponent.
func twoDecimals(v float64) string {
	if v > 0 && v < 0.005 {
		return "<0.01"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
