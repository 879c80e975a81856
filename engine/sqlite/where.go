package sqlite

import (
	"github.com/cairn-dev/cairn/engine"
	"maps"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/vecstore/where"
)

// The where filter rendered as SQLite SQL over the messages table.

// whereColumns are the WhereColumns keys as SQL over the messages table
// aliased c. The unary + keeps the planner off the confidence index:
// walking the recency (or channel/sender) index and testing confidence
// is cheaper than sorting every confident message.
var whereColumns = map[string]string{
	"channel_id":      "c.channel_id",
	"channel_type":    "(SELECT ch.channel_type FROM channels ch WHERE ch.id = c.channel_id)",
	"agent_name":      "c.sender_id",
	"project_id":      "c.sender_project_id",
	"timestamp":       "c.created_at",
	"confidence":      "+c.confidence",
	"message_type":    "c.message_type",
	"word_count":      "c.word_count",
	"has_breadcrumbs": "c.has_breadcrumbs",
}

// validSQL is the filter condition "every breadcrumb valid now" over the
// messages table aliased as alias: marks of a repository whose HEAD they
// were checked at, or the last marks of a repository not reachable. heads
// must have read every repository of the cache (Store.MarkedRepos).
func validSQL(alias string, heads *engine.RepoHeads) (string, []any) {
	reached := heads.Reached() // nil heads when a search is validated without running
	reach := slices.Sorted(maps.Keys(reached))
	cond := "EXISTS (SELECT 1 FROM breadcrumb_marks b WHERE b.message_id = " + alias + ".id AND b.repo <> '' AND b.worst = 0"
	if len(reach) == 0 {
		return cond + ")", nil
	}
	args := make([]any, 0, 3*len(reach))
	var ors []string
	for _, root := range reach {
		args = append(args, root)
	}
	for _, root := range reach {
		ors = append(ors, "(b.repo = ? AND b.head = ?)")
		args = append(args, root, reached[root])
	}
	return cond + " AND (b.repo NOT IN (" + placeholders(len(reach)) + ") OR " + strings.Join(ors, " OR ") + "))", args
}

// whereSQL renders a normalized where as SQL over messages aliased c.
func whereSQL(w *where.Expr) (string, []any, error) {
	var args []any
	var render func(w *where.Expr) (string, error)
	arg := func(v where.Value) any {
		switch v.Kind {
		case where.KindString:
			return v.Str
		case where.KindInt:
			return v.Int
		case where.KindFloat:
			return v.Float
		case where.KindBool:
			if v.Bool {
				return 1
			}
			return 0
		}
		return nil
	}
	render = func(w *where.Expr) (string, error) {
		switch w.Op {
		case where.OpAnd, where.OpOr:
			if len(w.Children) == 0 {
				if w.Op == where.OpAnd {
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
			if w.Op == where.OpOr {
				sep = " OR "
			}
			return "(" + strings.Join(parts, sep) + ")", nil
		}
		col, ok := whereColumns[w.Key]
		if !ok {
			return "", invalid("where", "unknown metadata key %q", w.Key)
		}
		if w.Key == "channel_type" && (w.Op == where.OpIn || w.Op == where.OpEq) {
			// The channels of those types, so that SQLite may walk the
			// channel index instead of a lookup per message.
			vals := w.Values
			if w.Op == where.OpEq {
				vals = []where.Value{w.Value}
			}
			for _, v := range vals {
				args = append(args, arg(v))
			}
			return "c.channel_id IN (SELECT id FROM channels WHERE channel_type IN (" + placeholders(len(vals)) + "))", nil
		}
		switch w.Op {
		case where.OpIn, where.OpNin:
			if len(w.Values) == 0 {
				if w.Op == where.OpIn {
					return "0", nil
				}
				return "1", nil
			}
			for _, v := range w.Values {
				args = append(args, arg(v))
			}
			op := " IN ("
			if w.Op == where.OpNin {
				op = " NOT IN ("
			}
			return col + op + placeholders(len(w.Values)) + ")", nil
		}
		ops := map[where.Op]string{where.OpEq: "=", where.OpNe: "<>", where.OpGt: ">", where.OpGte: ">=", where.OpLt: "<", where.OpLte: "<="}
		op, ok := ops[w.Op]
		if !ok {
			return "", invalid("where", "unsupported operator %s", w.Op)
		}
		args = append(args, arg(w.Value))
		return col + " " + op + " ?", nil
	}
	s, err := render(w)
	return s, args, err
}
