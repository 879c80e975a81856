package engine

import (
	"strings"

	"github.com/cairn-dev/cairn/vecstore/where"
)

// The where filter rendered as SQLite SQL over the messages table.

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
		k, ok := whereKeys[w.Key]
		if !ok {
			return "", invalid("where", "unknown metadata key %q", w.Key)
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
			return k.col + op + placeholders(len(w.Values)) + ")", nil
		}
		ops := map[where.Op]string{where.OpEq: "=", where.OpNe: "<>", where.OpGt: ">", where.OpGte: ">=", where.OpLt: "<", where.OpLte: "<="}
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
