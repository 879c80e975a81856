package engine

import (
	"errors"
	"math"
	"slices"
	"time"

	"github.com/cairn-dev/cairn/vecstore/where"
)

// The metadata every message vector carries, which Filter.Where may name.
// timestamp is created_at in Unix milliseconds (UTC).
var whereKeys = map[string]where.Kind{
	"channel_id":      where.KindString,
	"channel_type":    where.KindString,
	"agent_name":      where.KindString,
	"project_id":      where.KindString,
	"timestamp":       where.KindInt,
	"confidence":      where.KindFloat,
	"message_type":    where.KindString,
	"word_count":      where.KindInt,
	"has_breadcrumbs": where.KindBool,
}

// whereSchema types the keys of whereKeys for the parser, so that one walk
// checks the keys and converts the operands to their types (an int
// compared with confidence becomes a float, an integral float compared
// with timestamp or word_count an int): SQL and vecstore then evaluate the
// filter the same way.
func whereSchema() where.Schema {
	keys := make(map[string]where.Kind, len(whereKeys)+1)
	for k, v := range whereKeys {
		keys[k] = v
	}
	keys[ageDaysKey] = where.KindFloat
	return where.Schema{Keys: keys, MaxDepth: 32}
}

// WhereKeys lists the metadata keys a where filter may use.
func WhereKeys() []string {
	keys := make([]string, 0, len(whereKeys)+1)
	for k := range whereKeys {
		keys = append(keys, k)
	}
	keys = append(keys, ageDaysKey)
	slices.Sort(keys)
	return keys
}

// Bounds of a where filter over messages. The filter becomes one SQL
// expression: SQLite refuses an expression tree deeper than 1000 and more
// than 32766 bound values, so larger filters are refused as bad input
// naming the limit instead of failing inside SQLite.
const (
	MaxWhereClauses = 500
	MaxWhereValues  = 10000
)

// parseWhere parses a where filter over message metadata against
// whereSchema, with age_days made a timestamp bound at now. Empty input is
// no filter.
func parseWhere(raw []byte, now time.Time) (*where.Expr, error) {
	w, err := whereSchema().Parse(raw)
	if err != nil {
		var we *where.Error
		if errors.As(err, &we) {
			return nil, invalid("where", "%s", we.Reason)
		}
		return nil, invalid("where", "%v", err)
	}
	switch sz := w.Size(); {
	case sz.Clauses > MaxWhereClauses:
		return nil, invalid("where", "has %d clauses, more than the limit of %d", sz.Clauses, MaxWhereClauses)
	case sz.Values > MaxWhereValues:
		return nil, invalid("where", "has %d $in/$nin values, more than the limit of %d", sz.Values, MaxWhereValues)
	}
	if err := ageDaysToTimestamp(w, now); err != nil {
		return nil, err
	}
	return w, nil
}

// ageDaysKey is the vector-memory design's age filter: a message's age in
// days at the time of the search. It is not stored; each comparison
// becomes a bound on timestamp, so SQL and vecstore see the same filter.
const ageDaysKey = "age_days"

// maxAgeDays bounds an age_days operand (about 114 years, as max_age_hours).
const maxAgeDays = MaxHours / 24

func ageDaysToTimestamp(w *where.Expr, now time.Time) error {
	if w == nil {
		return nil
	}
	for _, c := range w.Children {
		if err := ageDaysToTimestamp(c, now); err != nil {
			return err
		}
	}
	if w.Key != ageDaysKey {
		return nil
	}
	// Older than d days is created before now-d: the comparison flips.
	flipped := map[where.Op]where.Op{where.OpLt: where.OpGt, where.OpLte: where.OpGte, where.OpGt: where.OpLt, where.OpGte: where.OpLte}
	op, ok := flipped[w.Op]
	if !ok {
		return invalid("where", "age_days takes $lt, $lte, $gt or $gte, got %s", w.Op)
	}
	days := w.Value.Float
	if math.IsNaN(days) || days < 0 || days > maxAgeDays {
		return invalid("where", "age_days must be a number of days from 0 to %.0f, got %v", float64(maxAgeDays), days)
	}
	w.Key, w.Op, w.Value = "timestamp", op, where.Int(now.UnixMilli()-int64(days*float64(24*time.Hour/time.Millisecond)))
	return nil
}

// resolved is a Filter checked and made absolute for one search.
type resolved struct {
	where *where.Expr // the filter over the WhereColumns keys; nil = none
	// unreadBy is Filter.UnreadBy, which the vector metadata cannot hold:
	// each store checks its nearest hits (Store.Nearest).
	unreadBy string
	// validAt are the HEADs of Filter.BreadcrumbsValid (nil = not set):
	// like unreadBy, outside the vector metadata.
	validAt *RepoHeads
}

// resolveFilter checks f, turns MaxAge into a lower time bound (relative to
// now) and turns it into one where over the WhereColumns keys, which each
// store renders (Selection).
func resolveFilter(f Filter, now time.Time) (resolved, error) {
	if f.MaxAge < 0 {
		return resolved{}, invalid("max_age", "must not be negative, got %s", f.MaxAge)
	}
	if f.MaxAge > 0 {
		if s := now.Add(-f.MaxAge); s.After(f.Since) {
			f.Since = s
		}
	}
	if f.MinWordCount < 0 {
		return resolved{}, invalid("min_word_count", "must not be negative, got %d", f.MinWordCount)
	}
	for _, t := range f.ChannelTypes {
		if t != ChannelAgentNotes && t != ChannelProject && t != ChannelPlain {
			return resolved{}, invalid("channel_type", "must be %s, %s or %s, got %q", ChannelAgentNotes, ChannelProject, ChannelPlain, t)
		}
	}
	if err := f.check(now); err != nil {
		return resolved{}, err
	}
	r := resolved{unreadBy: f.UnreadBy}
	if f.BreadcrumbsValid {
		r.validAt = f.validAt
	}
	var ws []*where.Expr
	strs := func(vs []string) []where.Value {
		out := make([]where.Value, len(vs))
		for i, v := range vs {
			out[i] = where.String(v)
		}
		return out
	}
	if len(f.ChannelIDs) > 0 {
		ws = append(ws, where.In("channel_id", strs(f.ChannelIDs)...))
	}
	if len(f.ChannelTypes) > 0 {
		ws = append(ws, where.In("channel_type", strs(f.ChannelTypes)...))
	}
	if len(f.SenderIDs) > 0 {
		ws = append(ws, where.In("agent_name", strs(f.SenderIDs)...))
	}
	if f.ExcludeSender != "" {
		ws = append(ws, where.Ne("agent_name", where.String(f.ExcludeSender)))
	}
	if f.Project != "" {
		ws = append(ws, where.Eq("project_id", where.String(f.Project)))
	}
	if len(f.MessageTypes) > 0 {
		ws = append(ws, where.In("message_type", strs(f.MessageTypes)...))
	}
	if f.MinConfidence > 0 {
		ws = append(ws, where.Gte("confidence", where.Float(f.MinConfidence)))
	}
	if !f.Since.IsZero() {
		ws = append(ws, where.Gte("timestamp", where.Int(f.Since.UnixMilli())))
	}
	if !f.Until.IsZero() {
		ws = append(ws, where.Lt("timestamp", where.Int(f.Until.UnixMilli())))
	}
	if f.HasBreadcrumbs != nil {
		ws = append(ws, where.Eq("has_breadcrumbs", where.Bool(*f.HasBreadcrumbs)))
	}
	if f.MinWordCount > 0 {
		ws = append(ws, where.Gte("word_count", where.Int(int64(f.MinWordCount))))
	}
	if len(f.Where) > 0 {
		w, err := parseWhere(f.Where, now)
		if err != nil {
			return resolved{}, err
		}
		if w != nil {
			ws = append(ws, w)
		}
	}
	switch len(ws) {
	case 0:
	case 1:
		r.where = ws[0]
	default:
		r.where = where.And(ws...)
	}
	if r.where != nil {
		if err := r.where.Validate(); err != nil {
			return resolved{}, invalid("filter", "%s", err)
		}
	}
	return r, nil
}
