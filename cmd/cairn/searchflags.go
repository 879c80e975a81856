package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/cmd/cairn/searchwire"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/search"
)

// searchFlags are cairn search's flags: the CLI's one mapping onto
// searchwire.SearchSpec, the request the HTTP API and the MCP tool take too.
// Every bound and default is the spec's (SearchSpec.Request checks them),
// so the three surfaces accept and reject the same searches and name the
// same field; the CLI only parses text (times, booleans) and converts
// --max-age-days to hours.
type searchFlags struct {
	spec                        searchwire.SearchSpec
	channels, channelTypes      stringList
	senders, types              stringList
	minConf, maxAgeDays         optFloat
	minScore                    optFloat
	all                         bool
	wSim, wRec, wConf, halfLife optFloat
	since, until, breadcrumbs   string
	where, model                string
}

func addSearchFlags(fs *flag.FlagSet) *searchFlags {
	f := &searchFlags{}
	s := &f.spec
	fs.StringVar(&s.Mode, "mode", "", "retrieval `MODE`: hybrid (default), semantic or keyword")
	fs.StringVar(&s.Profile, "profile", "", "ranking `PROFILE`: "+strings.Join(engine.Profiles(), ", ")+" (default "+engine.DefaultProfile+")")
	fs.StringVar(&s.Fusion, "fusion", "", "hybrid fusion `F`: calibrated (default), minmax, weighted or rrf")
	fs.IntVar(&s.Limit, "limit", engine.DefaultSearchLimit, "at most `N` results")
	fs.Var(&f.minScore, "min-score", "leave out results whose relevance is below `X` (0 to 1; default "+strconv.FormatFloat(search.DefaultFloor, 'g', -1, 64)+", 0 = every result)")
	fs.BoolVar(&f.all, "all", false, "every result, however unlikely relevant (--min-score 0)")
	fs.Var(&f.wSim, "w-similarity", "custom ranking: weight `X` of relevance")
	fs.Var(&f.wRec, "w-recency", "custom ranking: weight `X` of recency")
	fs.Var(&f.wConf, "w-confidence", "custom ranking: weight `X` of confidence")
	fs.Var(&f.halfLife, "half-life-hours", "custom ranking: recency half-life `H` hours (0 = no decay)")
	fs.Var(&f.channels, "channel", "only in channel `ID`")
	fs.Var(&f.channelTypes, "channel-type", "only channels of `TYPE` (agent-notes, project, channel)")
	fs.Var(&f.senders, "sender", "only from agent `NAME`")
	fs.StringVar(&s.ExcludeSender, "exclude-sender", "", "not from agent `NAME`")
	fs.StringVar(&s.Project, "project", "", "only from writers of project `ID`")
	fs.Var(&f.types, "type", "only messages of `TYPE`")
	fs.Var(&f.minConf, "min-confidence", "only messages with confidence >= `X`")
	fs.Var(&f.maxAgeDays, "max-age-days", "only messages at most `N` days old (fractions allowed)")
	fs.StringVar(&f.since, "since", "", "only messages created at or after `TIME` (RFC 3339 or YYYY-MM-DD)")
	fs.StringVar(&f.until, "until", "", "only messages created before `TIME` (RFC 3339 or YYYY-MM-DD)")
	fs.StringVar(&f.breadcrumbs, "has-breadcrumbs", "", "only messages with (true) or without (false) breadcrumbs")
	fs.IntVar(&s.MinWordCount, "min-words", 0, "only messages of at least `N` words")
	fs.StringVar(&s.UnreadBy, "unread-by", "", "only messages agent `NAME` has not read (cairn unread)")
	fs.BoolVar(&s.BreadcrumbsValid, "breadcrumbs-valid", false, "only notes whose breadcrumbs are all valid at their repository's HEAD (cairn check --breadcrumbs)")
	fs.BoolVar(&s.IncludeSuperseded, "include-superseded", false, "also messages a later one superseded (left out by default)")
	fs.Float64Var(&s.DemoteStale, "demote-stale", 0, "multiply the score of notes with changed or gone breadcrumbs by `F` (0 < F <= 1; 0 = off)")
	fs.StringVar(&f.where, "where", "", "Chroma-style where `JSON` over channel_id, channel_type, agent_name, project_id, timestamp (Unix ms), confidence, message_type, word_count, has_breadcrumbs")
	fs.StringVar(&f.model, "model", "", modelUsage)
	return f
}

// request returns the search the flags and the query words stand for,
// checked by SearchSpec.Request.
func (f *searchFlags) request(query []string) (engine.SearchRequest, error) {
	s := f.spec
	s.Query = strings.Join(query, " ")
	s.Channels, s.ChannelTypes, s.Senders, s.Types = f.channels, f.channelTypes, f.senders, f.types
	s.MinConfidence = f.minConf.v
	switch {
	case f.all && f.minScore.set && f.minScore.v != 0:
		return engine.SearchRequest{}, &engine.InvalidError{Field: "min_score", Rule: "--all keeps every result; do not combine it with --min-score " + f.minScore.String()}
	case f.all:
		s.MinScore = new(float64)
	case f.minScore.set:
		s.MinScore = &f.minScore.v
	}
	if f.maxAgeDays.set {
		// Checked here to name the flag the user typed (the spec checks
		// max_age_hours, in hours).
		if d := f.maxAgeDays.v; math.IsNaN(d) || d < 0 || d*24 > engine.MaxHours {
			return engine.SearchRequest{}, &engine.InvalidError{Field: "--max-age-days", Rule: fmt.Sprintf("must be a number of days from 0 to %.0f, got %v", engine.MaxHours/24, d)}
		}
		s.MaxAgeHours = f.maxAgeDays.v * 24
	}
	var err error
	if s.Since, err = parseTime("since", f.since); err != nil {
		return engine.SearchRequest{}, err
	}
	if s.Until, err = parseTime("until", f.until); err != nil {
		return engine.SearchRequest{}, err
	}
	if f.breadcrumbs != "" {
		b, err := strconv.ParseBool(f.breadcrumbs)
		if err != nil {
			return engine.SearchRequest{}, &engine.InvalidError{Field: "has_breadcrumbs", Rule: "must be true or false, got " + strconv.Quote(f.breadcrumbs)}
		}
		s.HasBreadcrumbs = &b
	}
	if f.where != "" {
		s.Where = []byte(f.where)
	}
	if f.wSim.set || f.wRec.set || f.wConf.set || f.halfLife.set {
		s.Weights = &searchwire.Weights{Similarity: f.wSim.v, Recency: f.wRec.v, Confidence: f.wConf.v, HalfLifeHours: f.halfLife.v}
	}
	return s.Request()
}

// parseTime reads an RFC 3339 time or a YYYY-MM-DD date (UTC midnight);
// nil for "".
func parseTime(field, s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return &t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return &t, nil
	}
	return nil, &engine.InvalidError{Field: field, Rule: "must be an RFC 3339 time (2026-01-02T15:04:05Z) or a date (2026-01-02), got " + strconv.Quote(s)}
}
