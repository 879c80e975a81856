package engine

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/fts"
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
}

// SearchRequest is one search.
type SearchRequest struct {
	// Query is searched as plain keyword terms (any text is safe). Empty
	// means a filter-only listing, newest first.
	Query  string
	Filter Filter
	// Limit is the number of results; 0 means 20.
	Limit int
}

// SearchResult is one hit: the full message and how it scored.
type SearchResult struct {
	Message Message `json:"message"`
	// Score orders the results, larger is better: the BM25 keyword score
	// for a query, 0 for a filter-only listing.
	Score float64 `json:"score"`
	// KeywordScore is the BM25 score (FTS5's bm25() negated; 0 without a query).
	KeywordScore float64 `json:"keyword_score"`
	// Snippet is the best fragment of the content with the matched terms
	// between ** marks ("" without a query).
	Snippet string `json:"snippet,omitempty"`
}

// DefaultSearchLimit is the number of results when SearchRequest.Limit is 0.
const DefaultSearchLimit = 20

// Search runs a keyword search (BM25 over FTS5, filters applied before
// ranking) or, with an empty query, a filter-only listing ordered by
// created_at then id, newest first.
func (e *Engine) Search(ctx context.Context, req SearchRequest) ([]SearchResult, error) {
	limit, err := checkLimit(req.Limit)
	if err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = DefaultSearchLimit
	}
	where, args, err := req.Filter.sql("c")
	if err != nil {
		return nil, err
	}
	done, err := e.enter()
	if err != nil {
		return nil, err
	}
	defer done()

	if strings.TrimSpace(req.Query) == "" {
		q := "SELECT " + strings.ReplaceAll(messageColumns, "m.", "c.") + " FROM messages c"
		if where != "" {
			q += " WHERE " + where
		}
		q += " ORDER BY c.created_at DESC, c.id DESC LIMIT ?"
		ms, err := queryMessages(ctx, e.r, q, append(args, limit)...)
		if err != nil {
			return nil, fmt.Errorf("engine: search: %w", err)
		}
		out := make([]SearchResult, len(ms))
		for i, m := range ms {
			out[i] = SearchResult{Message: m}
		}
		return out, nil
	}

	hits, err := e.fts.Search(ctx, e.r, fts.Request{Text: req.Query, Filter: where, Args: args, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("engine: search: %w", classify(err))
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.RowID
	}
	ms, err := e.getMessages(ctx, ids)
	if err != nil {
		return nil, err
	}
	if len(ms) != len(hits) {
		return nil, fmt.Errorf("%w: keyword index lists %d messages that are missing", ErrCorrupt, len(hits)-len(ms))
	}
	out := make([]SearchResult, len(hits))
	for i, h := range hits {
		out[i] = SearchResult{Message: ms[i], Score: h.Score, KeywordScore: h.Score, Snippet: h.Snippet}
	}
	return out, nil
}

// sql renders the filter as a boolean SQL expression over the messages table
// aliased as alias, with its arguments; "" when nothing filters.
func (f Filter) sql(alias string) (string, []any, error) {
	var conds []string
	var args []any
	col := func(c string) string { return alias + "." + c }
	in := func(field, column string, vals []string, check func(string, string) error) error {
		if len(vals) == 0 {
			return nil
		}
		if len(vals) > 1000 {
			return invalid(field, "at most 1000 values, got %d", len(vals))
		}
		for _, v := range vals {
			if err := check(field, v); err != nil {
				return err
			}
			args = append(args, v)
		}
		conds = append(conds, col(column)+" IN ("+placeholders(len(vals))+")")
		return nil
	}
	checkChannel := func(field, v string) error { _, err := parseChannel(field, v); return err }
	checkType := func(field, v string) error {
		if !typeRE.MatchString(v) {
			return invalid(field, "%s, got %q", typeRule, v)
		}
		return nil
	}
	if err := in("channel", "channel_id", f.ChannelIDs, checkChannel); err != nil {
		return "", nil, err
	}
	if err := in("sender", "sender_id", f.SenderIDs, checkAgent); err != nil {
		return "", nil, err
	}
	if err := in("message_type", "message_type", f.MessageTypes, checkType); err != nil {
		return "", nil, err
	}
	if f.ExcludeSender != "" {
		if err := checkAgent("exclude_sender", f.ExcludeSender); err != nil {
			return "", nil, err
		}
		conds = append(conds, col("sender_id")+" <> ?")
		args = append(args, f.ExcludeSender)
	}
	if f.Project != "" {
		if err := checkProject("project", f.Project); err != nil {
			return "", nil, err
		}
		conds = append(conds, col("sender_project_id")+" = ?")
		args = append(args, f.Project)
	}
	if math.IsNaN(f.MinConfidence) || f.MinConfidence < 0 || f.MinConfidence > 1 {
		return "", nil, invalid("min_confidence", "must be a number from 0 to 1, got %v", f.MinConfidence)
	}
	if f.MinConfidence > 0 {
		conds = append(conds, col("confidence")+" >= ?")
		args = append(args, f.MinConfidence)
	}
	if !f.Since.IsZero() {
		conds = append(conds, col("created_at")+" >= ?")
		args = append(args, f.Since.UnixMilli())
	}
	if !f.Until.IsZero() {
		conds = append(conds, col("created_at")+" < ?")
		args = append(args, f.Until.UnixMilli())
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return "", nil, invalid("since/until", "since (%s) must be before until (%s)", f.Since.UTC().Format(time.RFC3339), f.Until.UTC().Format(time.RFC3339))
	}
	return strings.Join(conds, " AND "), args, nil
}
