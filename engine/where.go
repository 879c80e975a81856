package engine

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/vecstore"
)

// The metadata every message vector carries, which Filter.Where may name.
// timestamp is created_at in Unix milliseconds (UTC).
var whereKeys = map[string]struct {
	kind vecstore.Kind
	col  string // SQL over the messages table aliased c
}{
	"channel_id":      {vecstore.KindString, "c.channel_id"},
	"channel_type":    {vecstore.KindString, "(SELECT ch.channel_type FROM channels ch WHERE ch.id = c.channel_id)"},
	"agent_name":      {vecstore.KindString, "c.sender_id"},
	"project_id":      {vecstore.KindString, "c.sender_project_id"},
	"timestamp":       {vecstore.KindInt, "c.created_at"},
	"confidence":      {vecstore.KindFloat, "c.confidence"},
	"message_type":    {vecstore.KindString, "c.message_type"},
	"word_count":      {vecstore.KindInt, "c.word_count"},
	"has_breadcrumbs": {vecstore.KindBool, "c.has_breadcrumbs"},
}

// WhereKeys lists the metadata keys a where filter may use.
func WhereKeys() []string {
	keys := make([]string, 0, len(whereKeys))
	for k := range whereKeys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// parseWhere parses a Chroma-style where filter over message metadata and
// normalizes its operands to the keys' types (an int compared with
// confidence becomes a float, an integral float compared with timestamp or
// word_count an int), so that SQL and vecstore evaluate it the same way.
// Empty input is no filter.
func parseWhere(raw []byte) (*vecstore.Where, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	w, err := vecstore.ParseWhere(raw)
	if err != nil {
		return nil, invalid("where", "%s", vecstore.ErrorMessage(err))
	}
	if w == nil {
		return nil, nil
	}
	if err := normalizeWhere(w, 0); err != nil {
		return nil, err
	}
	return w, nil
}

func normalizeWhere(w *vecstore.Where, depth int) error {
	if depth > 32 {
		return invalid("where", "nested more than 32 levels")
	}
	if w.Op == vecstore.OpAnd || w.Op == vecstore.OpOr {
		for _, c := range w.Children {
			if err := normalizeWhere(c, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	k, ok := whereKeys[w.Key]
	if !ok {
		return invalid("where", "unknown metadata key %q: use one of %s", w.Key, strings.Join(WhereKeys(), ", "))
	}
	switch w.Op {
	case vecstore.OpGt, vecstore.OpGte, vecstore.OpLt, vecstore.OpLte:
		if k.kind == vecstore.KindString || k.kind == vecstore.KindBool {
			return invalid("where", "%s is a %s: %s needs a number key", w.Key, k.kind, w.Op)
		}
	}
	conv := func(v vecstore.Value) (vecstore.Value, error) {
		switch {
		case v.Kind == k.kind:
			return v, nil
		case k.kind == vecstore.KindFloat && v.Kind == vecstore.KindInt:
			return vecstore.Float(float64(v.Int)), nil
		case k.kind == vecstore.KindInt && v.Kind == vecstore.KindFloat && v.Float == math.Trunc(v.Float) && math.Abs(v.Float) < 1<<53:
			return vecstore.Int(int64(v.Float)), nil
		}
		return v, invalid("where", "%s is a %s, got a %s operand", w.Key, k.kind, v.Kind)
	}
	var err error
	if w.Op == vecstore.OpIn || w.Op == vecstore.OpNin {
		for i := range w.Values {
			if w.Values[i], err = conv(w.Values[i]); err != nil {
				return err
			}
		}
		return nil
	}
	w.Value, err = conv(w.Value)
	return err
}

// whereSQL renders a normalized where as SQL over messages aliased c.
func whereSQL(w *vecstore.Where) (string, []any, error) {
	var args []any
	var render func(w *vecstore.Where) (string, error)
	arg := func(v vecstore.Value) any {
		switch v.Kind {
		case vecstore.KindString:
			return v.Str
		case vecstore.KindInt:
			return v.Int
		case vecstore.KindFloat:
			return v.Float
		case vecstore.KindBool:
			if v.Bool {
				return 1
			}
			return 0
		}
		return nil
	}
	render = func(w *vecstore.Where) (string, error) {
		switch w.Op {
		case vecstore.OpAnd, vecstore.OpOr:
			if len(w.Children) == 0 {
				if w.Op == vecstore.OpAnd {
					return "1", nil
				}
				return "0", nil
			}
			parts := make([]string, len(w.Children))
			for i, c := range w.Children {
				s, err := render(c)
				if err != nil {
					return "", err
				}
				parts[i] = s
			}
			sep := " AND "
			if w.Op == vecstore.OpOr {
				sep = " OR "
			}
			return "(" + strings.Join(parts, sep) + ")", nil
		}
		k, ok := whereKeys[w.Key]
		if !ok {
			return "", invalid("where", "unknown metadata key %q", w.Key)
		}
		switch w.Op {
		case vecstore.OpIn, vecstore.OpNin:
			if len(w.Values) == 0 {
				if w.Op == vecstore.OpIn {
					return "0", nil
				}
				return "1", nil
			}
			for _, v := range w.Values {
				args = append(args, arg(v))
			}
			op := " IN ("
			if w.Op == vecstore.OpNin {
				op = " NOT IN ("
			}
			return k.col + op + placeholders(len(w.Values)) + ")", nil
		}
		ops := map[vecstore.WhereOp]string{vecstore.OpEq: "=", vecstore.OpNe: "<>", vecstore.OpGt: ">", vecstore.OpGte: ">=", vecstore.OpLt: "<", vecstore.OpLte: "<="}
		op, ok := ops[w.Op]
		if !ok {
			return "", invalid("where", "unsupported operator %s", w.Op)
		}
		args = append(args, arg(w.Value))
		return k.col + " " + op + " ?", nil
	}
	s, err := render(w)
	return s, args, err
}

// resolved is a Filter checked and made absolute for one search.
type resolved struct {
	sql   string
	args  []any
	where *vecstore.Where // the same filter for vecstore; nil = none
}

// resolveFilter checks f, turns MaxAge into a lower time bound (relative to
// now) and renders it for both sides.
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
	sql, args, err := f.sql("c")
	if err != nil {
		return resolved{}, err
	}
	r := resolved{sql: sql, args: args}
	var ws []*vecstore.Where
	strs := func(vs []string) []vecstore.Value {
		out := make([]vecstore.Value, len(vs))
		for i, v := range vs {
			out[i] = vecstore.String(v)
		}
		return out
	}
	if len(f.ChannelIDs) > 0 {
		ws = append(ws, vecstore.In("channel_id", strs(f.ChannelIDs)...))
	}
	if len(f.ChannelTypes) > 0 {
		ws = append(ws, vecstore.In("channel_type", strs(f.ChannelTypes)...))
	}
	if len(f.SenderIDs) > 0 {
		ws = append(ws, vecstore.In("agent_name", strs(f.SenderIDs)...))
	}
	if f.ExcludeSender != "" {
		ws = append(ws, vecstore.Ne("agent_name", vecstore.String(f.ExcludeSender)))
	}
	if f.Project != "" {
		ws = append(ws, vecstore.Eq("project_id", vecstore.String(f.Project)))
	}
	if len(f.MessageTypes) > 0 {
		ws = append(ws, vecstore.In("message_type", strs(f.MessageTypes)...))
	}
	if f.MinConfidence > 0 {
		ws = append(ws, vecstore.Gte("confidence", vecstore.Float(f.MinConfidence)))
	}
	if !f.Since.IsZero() {
		ws = append(ws, vecstore.Gte("timestamp", vecstore.Int(f.Since.UnixMilli())))
	}
	if !f.Until.IsZero() {
		ws = append(ws, vecstore.Lt("timestamp", vecstore.Int(f.Until.UnixMilli())))
	}
	if f.HasBreadcrumbs != nil {
		ws = append(ws, vecstore.Eq("has_breadcrumbs", vecstore.Bool(*f.HasBreadcrumbs)))
	}
	if f.MinWordCount > 0 {
		ws = append(ws, vecstore.Gte("word_count", vecstore.Int(int64(f.MinWordCount))))
	}
	if len(f.Where) > 0 {
		w, err := parseWhere(f.Where)
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
		r.where = vecstore.And(ws...)
	}
	if r.where != nil {
		if err := r.where.Validate(); err != nil {
			return resolved{}, invalid("filter", "%s", vecstore.ErrorMessage(err))
		}
	}
	return r, nil
}
