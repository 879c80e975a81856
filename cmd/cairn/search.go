package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

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
		run: runSearch,
	}
}

func runSearch(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	var channels, senders, types stringList
	fs.Var(&channels, "channel", "only in channel `ID`")
	fs.Var(&senders, "sender", "only from agent `NAME`")
	fs.Var(&types, "type", "only messages of `TYPE`")
	exclude := fs.String("exclude-sender", "", "not from agent `NAME`")
	project := fs.String("project", "", "only from writers of project `ID`")
	var minConf optFloat
	fs.Var(&minConf, "min-confidence", "only messages with confidence >= `X`")
	var maxAge optFloat
	fs.Var(&maxAge, "max-age-days", "only messages at most `N` days old (fractions allowed)")
	since := fs.String("since", "", "only messages created at or after `TIME` (RFC 3339 or YYYY-MM-DD)")
	until := fs.String("until", "", "only messages created before `TIME` (RFC 3339 or YYYY-MM-DD)")
	limit := fs.Int("limit", engine.DefaultSearchLimit, "at most `N` results")
	hf := addHybridFlags(fs) // search_hybrid.go (issue 6)
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	f := engine.Filter{
		ChannelIDs: channels, SenderIDs: senders, MessageTypes: types,
		ExcludeSender: *exclude, Project: *project, MinConfidence: minConf.v,
	}
	if *limit <= 0 {
		return &engine.InvalidError{Field: "limit", Rule: fmt.Sprintf("must be from 1 to %d, got %d", engine.MaxLimit, *limit)}
	}
	if f.Since, err = parseTime("since", *since); err != nil {
		return err
	}
	if f.Until, err = parseTime("until", *until); err != nil {
		return err
	}
	now := time.Now
	if e.now != nil {
		now = e.now
	}
	if maxAge.set {
		if math.IsNaN(maxAge.v) || maxAge.v < 0 || maxAge.v > 1e6 {
			return &engine.InvalidError{Field: "max-age-days", Rule: fmt.Sprintf("must be a number of days from 0 to 1000000, got %v", maxAge.v)}
		}
		s := now().Add(-time.Duration(maxAge.v * 24 * float64(time.Hour)))
		if s.After(f.Since) {
			f.Since = s
		}
	}
	req := engine.SearchRequest{Query: strings.Join(pos, " "), Filter: f, Limit: *limit}
	if err := hf.apply(&req); err != nil {
		return err
	}
	return e.withModelEngine(ctx, hf.model, forQuery, func(eng *engine.Engine) error {
		resp, err := eng.SearchDetailed(ctx, req)
		if err != nil {
			return err
		}
		e.printSearchNotes(resp)
		return e.printResults(resp.Results)
	})
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
		text := r.Message.Content
		if r.Snippet != "" {
			extra = "  score " + strconv.FormatFloat(r.Score, 'g', 3, 64)
			text = r.Snippet
		}
		printMessageHeader(e.stdout, r.Message, extra)
		fmt.Fprintf(e.stdout, "%s\n\n", indent(text))
	}
	return nil
}

// parseTime reads an RFC 3339 time or a YYYY-MM-DD date (UTC midnight).
func parseTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, &engine.InvalidError{Field: field, Rule: fmt.Sprintf("must be an RFC 3339 time (2026-01-02T15:04:05Z) or a date (2026-01-02), got %q", s)}
}
