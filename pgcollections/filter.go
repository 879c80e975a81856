package pgcollections

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/vecstore/where"
)

// sqlArgs collects the parameters of one statement.
type sqlArgs []any

// add appends v and returns its placeholder.
func (a *sqlArgs) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// whereSQL translates a metadata filter to a condition over the record
// columns metadata and float_keys that never yields NULL, with vecstore's
// semantics: comparisons match only keys present with a comparable kind; an
// int-typed value compared with a float operand compares with the operand
// truncated toward zero (Chroma 1.0.0); $ne and $nin are complements over
// all records (a record without the key matches them).
func whereSQL(w *where.Expr, a *sqlArgs) string {
	switch w.Op {
	case where.OpAnd, where.OpOr:
		parts := make([]string, len(w.Children))
		for i, c := range w.Children {
			parts[i] = whereSQL(c, a)
		}
		return joinSQL(w.Op == where.OpAnd, parts)
	case where.OpEq:
		return cmpSQL("=", w.Key, w.Value, a)
	case where.OpNe:
		return "NOT " + cmpSQL("=", w.Key, w.Value, a)
	case where.OpIn, where.OpNin:
		parts := make([]string, 0, len(w.Values)+1)
		for _, v := range w.Values {
			parts = append(parts, cmpSQL("=", w.Key, v, a))
		}
		parts = append(parts, "FALSE")
		in := "(" + strings.Join(parts, " OR ") + ")"
		if w.Op == where.OpNin {
			return "NOT " + in
		}
		return in
	case where.OpGt:
		return cmpSQL(">", w.Key, w.Value, a)
	case where.OpGte:
		return cmpSQL(">=", w.Key, w.Value, a)
	case where.OpLt:
		return cmpSQL("<", w.Key, w.Value, a)
	case where.OpLte:
		return cmpSQL("<=", w.Key, w.Value, a)
	}
	return "FALSE"
}

// cmpSQL is one comparison of key's value with operand (never NULL).
func cmpSQL(op, key string, v where.Value, a *sqlArgs) string {
	switch v.Kind {
	case where.KindString, where.KindBool:
		if op != "=" {
			return "FALSE"
		}
		var x any = v.Str
		if v.Kind == where.KindBool {
			x = v.Bool
		}
		obj, _ := json.Marshal(map[string]any{key: x})
		// Containment can use the GIN index on metadata.
		return "coalesce(metadata @> " + a.add(string(obj)) + "::jsonb, FALSE)"
	case where.KindInt:
		k := a.add(key)
		return "coalesce(jsonb_typeof(metadata -> " + k + ") = 'number' AND (metadata ->> " + k + ")::numeric " + op + " " +
			a.add(strconv.FormatInt(v.Int, 10)) + "::numeric, FALSE)"
	case where.KindFloat:
		if math.IsNaN(v.Float) || math.IsInf(v.Float, 0) {
			return "FALSE"
		}
		k := a.add(key)
		f := a.add(strconv.FormatFloat(v.Float, 'g', -1, 64))
		trunc := a.add(strconv.FormatInt(truncToInt(v.Float), 10))
		return "coalesce(jsonb_typeof(metadata -> " + k + ") = 'number' AND CASE WHEN coalesce(float_keys ? " + k +
			", FALSE) THEN (metadata ->> " + k + ")::numeric " + op + " " + f + "::numeric ELSE (metadata ->> " + k + ")::numeric " +
			op + " " + trunc + "::numeric END, FALSE)"
	}
	return "FALSE"
}

// truncToInt converts a float operand as Chroma 1.0.0 compares it with
// int-typed values (Rust's saturating cast: toward zero).
func truncToInt(f float64) int64 {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// hasRegex reports whether a document filter uses a regular expression,
// which runs in Go (RE2, as vecstore) rather than in PostgreSQL's dialect.
func hasRegex(d *where.DocExpr) bool {
	if d == nil {
		return false
	}
	switch d.Op {
	case where.DocRegex, where.DocNotRegex:
		return true
	case where.DocAnd, where.DocOr:
		for _, c := range d.Children {
			if hasRegex(c) {
				return true
			}
		}
	}
	return false
}

// documentSQL translates a document filter without regular expressions to
// a condition over the document column that never yields NULL.
func documentSQL(d *where.DocExpr, a *sqlArgs) string {
	switch d.Op {
	case where.DocAnd, where.DocOr:
		parts := make([]string, len(d.Children))
		for i, c := range d.Children {
			parts[i] = documentSQL(c, a)
		}
		return joinSQL(d.Op == where.DocAnd, parts)
	case where.DocContains:
		return "coalesce(strpos(document, " + a.add(d.Text) + ") > 0, FALSE)"
	case where.DocNotContains:
		return "NOT coalesce(strpos(document, " + a.add(d.Text) + ") > 0, FALSE)"
	}
	return "FALSE"
}

// joinSQL is the conjunction (and) or disjunction of conditions: $and []
// matches everything, $or [] nothing.
func joinSQL(and bool, parts []string) string {
	if len(parts) == 0 {
		if and {
			return "TRUE"
		}
		return "FALSE"
	}
	if and {
		return "(" + strings.Join(parts, " AND ") + ")"
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}
