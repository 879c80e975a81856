package engine

import (
	"encoding/json"
	"math"
	"time"

	"github.com/cairn-dev/cairn/engine/search"
)

// Filter restricts a search or listing. Zero fields do not filter. All set
// fields must hold (AND); list fields match any of their values (OR).
type Filter struct {
	ChannelIDs    []string
	SenderIDs     []string
	ExcludeSender string
	// Project keeps messages whose sender_project_id is Project.
	Project       string
	MessageTypes  []string
	MinConfidence float64
	// Since and Until bound created_at: Since <= created_at < Until.
	Since, Until time.Time

	// ChannelTypes keeps messages of channels of these types
	// (ChannelAgentNotes, ChannelProject, ChannelPlain).
	ChannelTypes []string
	// MaxAge keeps messages at most this old (relative to the engine's
	// clock at search time); it tightens Since. Search resolves it.
	MaxAge time.Duration
	// HasBreadcrumbs, when set, keeps messages with (true) or without
	// (false) breadcrumbs.
	HasBreadcrumbs *bool
	// MinWordCount keeps messages of at least this many words.
	MinWordCount int
	// Where is a Chroma-style where filter (JSON) over the metadata every
	// message vector carries: channel_id, channel_type, agent_name,
	// project_id, timestamp (created_at, Unix ms), confidence,
	// message_type, word_count, has_breadcrumbs. It is evaluated in SQL on
	// the keyword side and by vecstore on the semantic side.
	Where json.RawMessage
	// UnreadBy keeps the messages this agent has not read (engine/unread.go).
	UnreadBy string
	// BreadcrumbsValid keeps the messages whose breadcrumbs the marks cache
	// says are all valid at the HEAD of the repository they were written
	// in, or were at the last check of a repository not reachable from
	// this machine (engine/crumbmarks.go): messages without breadcrumbs,
	// not checked yet, or checked at another commit are left out.
	BreadcrumbsValid bool
	// IncludeSuperseded keeps the messages a later message superseded
	// (Message.SupersededBy); by default searches and listings leave
	// them out.
	IncludeSuperseded bool

	// validAt are the repositories' HEADs BreadcrumbsValid holds at (set
	// by Engine.plan).
	validAt *RepoHeads
}

// SearchRequest is one search.
type SearchRequest struct {
	// Query is searched as plain keyword terms (any text is safe). Empty
	// means a filter-only listing, newest first.
	Query  string
	Filter Filter
	// Limit is the number of results; 0 means 20.
	Limit int
	// Mode is ModeHybrid (""), ModeSemantic or ModeKeyword.
	Mode SearchMode
	// Ranking combines relevance with recency and confidence; the zero
	// value is DefaultProfile (relevance only).
	Ranking Ranking
	// Fusion picks how hybrid mode fuses the keyword and semantic lists;
	// "" is DefaultFusion.
	Fusion Fusion
	// MinScore is the relevance floor: results whose calibrated relevance
	// (Scores.Fused) is below it are not returned, so that a query nothing
	// answers returns nothing. nil means search.DefaultFloor, 0 keeps every
	// result; at most 1. A listing (no query) has no floor.
	MinScore *float64
}

// resolveFloor returns the relevance floor of min (nil: the default).
func resolveFloor(floor *float64) (float64, error) {
	if floor == nil {
		return search.DefaultFloor, nil
	}
	if m := *floor; math.IsNaN(m) || m < 0 || m > 1 {
		return 0, invalid("min_score", "must be a relevance from 0 (keep every result) to 1, got %v", m)
	}
	return *floor, nil
}

// Bounds of a search, the same on every surface.
const (
	// MaxHours bounds a duration given in hours (max_age_hours,
	// weights.half_life_hours, age_days in a where filter): about 114
	// years, so that it always fits a time.Duration (which holds about
	// 2.56 million hours).
	MaxHours = 1e6
	// MaxQueryBytes bounds a search's query text, on every surface: 4 KiB,
	// twice what the embedding model reads (512 tokens, about 2 KB of
	// English), and any question or pasted paragraph. The keyword side's
	// cost grows with every word (about 2 CPU-seconds per MB of query), so
	// a longer text costs more with nothing to gain.
	MaxQueryBytes = 4096
)

// Validate checks r as a search's first step does, at the current time
// (which resolves only Filter.MaxAge), without a store: an adapter checks
// a request with it before it opens an engine. Its errors are
// *InvalidError naming the JSON field every surface shares (mode, fusion,
// profile, weights.*, min_score, the filters).
func (r SearchRequest) Validate() error {
	_, err := planSearch(r, time.Now())
	return err
}

// SearchResult is one hit: the full message and how it scored.
type SearchResult struct {
	Message Message `json:"message"`
	// Score is Scores.Final: under the default profile the calibrated
	// relevance (Scores.Fused, roughly the probability that the result is
	// relevant), combined with recency and confidence by the other
	// profiles; the recency of a filter-only listing.
	Score float64 `json:"score"`
	// KeywordScore is the BM25 score (FTS5's bm25() negated; 0 without a query).
	KeywordScore float64 `json:"keyword_score"`
	// Snippet is the best fragment of the content with the matched terms
	// between ** marks ("" without a query).
	Snippet string `json:"snippet,omitempty"`
	// Scores is the score breakdown; Score equals Scores.Final.
	Scores Scores `json:"scores"`
	// VectorMissing says the message has no vector in the vectors this
	// search used (not embedded yet, or no usable embedder): it can only
	// have been found by keyword. Always false in keyword mode.
	VectorMissing bool `json:"vector_missing,omitempty"`
}

// DefaultSearchLimit is the number of results when SearchRequest.Limit is 0.
const DefaultSearchLimit = 20

// checkIn checks a list field: at most 1000 values, each passing check.
func checkIn(field string, vals []string, check func(string, string) error) error {
	if len(vals) > 1000 {
		return invalid(field, "at most 1000 values, got %d", len(vals))
	}
	for _, v := range vals {
		if err := check(field, v); err != nil {
			return err
		}
	}
	return nil
}

func checkChannelID(field, v string) error { _, err := parseChannel(field, v); return err }

func checkType(field, v string) error {
	if !typeRE.MatchString(v) {
		return invalid(field, "%s, got %q", typeRule, v)
	}
	return nil
}

// check checks the fields of f that resolveFilter does not (each store
// renders the filter from its Selection).
func (f Filter) check(now time.Time) error {
	if err := f.checkIdentity(); err != nil {
		return err
	}
	if math.IsNaN(f.MinConfidence) || f.MinConfidence < 0 || f.MinConfidence > 1 {
		return invalid("min_confidence", "must be a number from 0 to 1, got %v", f.MinConfidence)
	}
	if len(f.ChannelTypes) > 3 {
		return invalid("channel_type", "at most 3 values, got %d", len(f.ChannelTypes))
	}
	if len(f.Where) > 0 {
		if _, err := parseWhere(f.Where, now); err != nil {
			return err
		}
	}
	if f.UnreadBy != "" {
		if err := CheckAgent("unread_by", f.UnreadBy); err != nil {
			return err
		}
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return invalid("since/until", "since (%s) must be before until (%s)", f.Since.UTC().Format(time.RFC3339), f.Until.UTC().Format(time.RFC3339))
	}
	return nil
}

// checkIdentity checks the fields on who wrote what where: channels,
// senders, types, the excluded sender and the project.
func (f Filter) checkIdentity() error {
	if err := checkIn("channel", f.ChannelIDs, checkChannelID); err != nil {
		return err
	}
	if err := checkIn("sender", f.SenderIDs, CheckAgent); err != nil {
		return err
	}
	if err := checkIn("message_type", f.MessageTypes, checkType); err != nil {
		return err
	}
	if f.ExcludeSender != "" {
		if err := CheckAgent("exclude_sender", f.ExcludeSender); err != nil {
			return err
		}
	}
	if f.Project != "" {
		if err := checkProject("project", f.Project); err != nil {
			return err
		}
	}
	return nil
}
