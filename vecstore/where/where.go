package where

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Op is the operator of an Expr node.
type Op uint8

const (
	OpEq Op = iota + 1
	OpNe
	OpGt
	OpGte
	OpLt
	OpLte
	OpIn
	OpNin
	OpAnd
	OpOr
)

var opNames = map[Op]string{
	OpEq: "$eq", OpNe: "$ne", OpGt: "$gt", OpGte: "$gte", OpLt: "$lt", OpLte: "$lte",
	OpIn: "$in", OpNin: "$nin", OpAnd: "$and", OpOr: "$or",
}

func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Expr is a parsed, validated metadata filter (a where clause). A nil *Expr
// matches every record.
//
// Comparison nodes have Key and Value ($eq..$lte) or Values ($in, $nin, all of
// one kind: the kind of the first element, with ints widened to floats when the
// first element is a float, as Chroma 1.0.0 does). $and/$or nodes have Children
// (possibly empty: $and [] matches everything, $or [] nothing).
type Expr struct {
	Op       Op
	Key      string
	Value    Value
	Values   []Value
	Children []*Expr
}

// MaxDepth is the deepest $and/$or nesting the parsers accept.
const MaxDepth = 256

// Schema types the metadata keys a filter may name. Its zero value accepts
// every key with the operand kinds as written (Chroma's rules).
type Schema struct {
	// Keys, when not nil, lists the only keys a filter may name and their
	// kinds. Range operators then need a number key, and operands take their
	// key's kind: an int compared with a float key becomes a float, an
	// integral float compared with an int key an int; any other mismatch is
	// an error.
	Keys map[string]Kind
	// MaxDepth bounds the $and/$or nesting (0 or more than MaxDepth means MaxDepth).
	MaxDepth int
}

// Parse parses a JSON where clause with no schema (Chroma's rules).
func Parse(data []byte) (*Expr, error) { return Schema{}.Parse(data) }

// FromJSON builds an Expr from a value decoded by encoding/json with
// UseNumber (json.Number for numbers), with no schema. nil gives a nil *Expr.
func FromJSON(x any) (*Expr, error) { return Schema{}.FromJSON(x) }

// Parse parses a JSON where clause against s. Empty input and JSON null
// give a nil *Expr (no filter).
func (s Schema) Parse(data []byte) (*Expr, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, nil
	}
	x, err := decodeJSONNumber(data)
	if err != nil {
		return nil, &Error{Clause: ClauseWhere, Reason: "not valid JSON", Err: err}
	}
	return s.FromJSON(x)
}

// FromJSON builds an Expr from a value decoded with UseNumber, checking it
// against s in the same walk.
func (s Schema) FromJSON(x any) (*Expr, error) {
	if x == nil {
		return nil, nil
	}
	if s.MaxDepth <= 0 || s.MaxDepth > MaxDepth {
		s.MaxDepth = MaxDepth
	}
	return s.exprFromJSON(x, 0)
}

func decodeJSONNumber(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return x, nil
}

func (s Schema) exprFromJSON(x any, depth int) (*Expr, error) {
	k, v, err := clause(ClauseWhere, x, depth, s.MaxDepth)
	if err != nil {
		return nil, err
	}
	if k == "$and" || k == "$or" {
		w := &Expr{Op: OpAnd}
		if k == "$or" {
			w.Op = OpOr
		}
		w.Children, err = children(ClauseWhere, k, v, func(c any) (*Expr, error) { return s.exprFromJSON(c, depth+1) })
		if err != nil {
			return nil, err
		}
		return w, nil
	}
	// A key comparison: a scalar (implicit $eq) or {"$op": operand}.
	if sv, ok := ValueFromJSON(v); ok {
		if sv.IsNull() {
			return nil, keyErr(k, "the value to compare with must not be null")
		}
		return s.check(&Expr{Op: OpEq, Key: k, Value: sv})
	}
	ops, ok := v.(map[string]any)
	if !ok || len(ops) != 1 {
		return nil, keyErr(k, "needs a value or an object with exactly one operator")
	}
	var w *Expr
	for opName, operand := range ops {
		if w, err = comparisonFromJSON(k, opName, operand); err != nil {
			return nil, err
		}
	}
	return s.check(w)
}

// clause checks the depth of a clause of either language and returns its
// one key and value.
func clause(c Clause, x any, depth, maxDepth int) (string, any, error) {
	if depth > maxDepth {
		return "", nil, &Error{Clause: c, Reason: fmt.Sprintf("nested more than %d levels", maxDepth)}
	}
	obj, _ := x.(map[string]any)
	if len(obj) == 1 {
		for k, v := range obj {
			return k, v, nil
		}
	}
	return "", nil, &Error{Clause: c, Reason: "a clause must be an object with exactly one key"}
}

// children parses the array of an $and or $or of either language.
func children[T any](c Clause, op string, v any, parse func(any) (T, error)) ([]T, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, &Error{Clause: c, Reason: op + " needs an array of clauses"}
	}
	out := make([]T, 0, len(arr))
	for _, x := range arr {
		t, err := parse(x)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func keyErr(key, reason string) *Error {
	return &Error{Clause: ClauseWhere, Key: key, Reason: fmt.Sprintf("%s: %s", key, reason)}
}

var opByName = map[string]Op{"$eq": OpEq, "$ne": OpNe, "$gt": OpGt, "$gte": OpGte, "$lt": OpLt,
	"$lte": OpLte, "$in": OpIn, "$nin": OpNin}

func comparisonFromJSON(key, opName string, operand any) (*Expr, error) {
	op, ok := opByName[opName]
	if !ok {
		return nil, keyErr(key, fmt.Sprintf("unknown operator %q: use $eq, $ne, $gt, $gte, $lt, $lte, $in or $nin", opName))
	}
	if op == OpIn || op == OpNin {
		arr, ok := operand.([]any)
		if !ok || len(arr) == 0 {
			return nil, keyErr(key, op.String()+" needs a non-empty array")
		}
		vals := make([]Value, 0, len(arr))
		for _, e := range arr {
			v, ok := ValueFromJSON(e)
			if !ok || v.IsNull() {
				return nil, keyErr(key, op.String()+" values must be strings, numbers or booleans")
			}
			vals = append(vals, v)
		}
		w := &Expr{Op: op, Key: key, Values: vals}
		if err := w.normalizeList(); err != nil {
			return nil, err
		}
		return w, nil
	}
	v, ok := ValueFromJSON(operand)
	if !ok || v.IsNull() {
		return nil, keyErr(key, op.String()+" needs a string, number or boolean")
	}
	w := &Expr{Op: op, Key: key, Value: v}
	if err := w.validateNode(); err != nil {
		return nil, err
	}
	return w, nil
}

// check applies the schema to a comparison node: a known key, a number key
// for range operators, operands converted to the key's kind.
func (s Schema) check(w *Expr) (*Expr, error) {
	if s.Keys == nil {
		return w, nil
	}
	kind, ok := s.Keys[w.Key]
	if !ok {
		keys := make([]string, 0, len(s.Keys))
		for k := range s.Keys {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return nil, &Error{Clause: ClauseWhere, Key: w.Key,
			Reason: fmt.Sprintf("unknown metadata key %q: use one of %s", w.Key, strings.Join(keys, ", "))}
	}
	switch w.Op {
	case OpGt, OpGte, OpLt, OpLte:
		if kind == KindString || kind == KindBool {
			return nil, &Error{Clause: ClauseWhere, Key: w.Key, Reason: fmt.Sprintf("%s is a %s: %s needs a number key", w.Key, kind, w.Op)}
		}
	}
	conv := func(v Value) (Value, error) {
		switch {
		case v.Kind == kind:
			return v, nil
		case kind == KindFloat && v.Kind == KindInt:
			return Float(float64(v.Int)), nil
		case kind == KindInt && v.Kind == KindFloat && v.Float == math.Trunc(v.Float) && math.Abs(v.Float) < 1<<53:
			return Int(int64(v.Float)), nil
		}
		return v, &Error{Clause: ClauseWhere, Key: w.Key, Reason: fmt.Sprintf("%s is a %s, got a %s operand", w.Key, kind, v.Kind)}
	}
	var err error
	if w.Op == OpIn || w.Op == OpNin {
		for i := range w.Values {
			if w.Values[i], err = conv(w.Values[i]); err != nil {
				return nil, err
			}
		}
		return w, nil
	}
	if w.Value, err = conv(w.Value); err != nil {
		return nil, err
	}
	return w, nil
}

// normalizeList converts an $in/$nin list to the kind of its first element.
func (w *Expr) normalizeList() error {
	if len(w.Values) == 0 {
		return keyErr(w.Key, w.Op.String()+" needs a non-empty array")
	}
	k := w.Values[0].Kind
	for i, v := range w.Values {
		switch {
		case v.Kind == k:
		case k == KindFloat && v.Kind == KindInt:
			w.Values[i] = Float(float64(v.Int))
		default:
			return keyErr(w.Key, fmt.Sprintf("%s values must all be of one type (the first is a %s)", w.Op, k))
		}
	}
	return nil
}

func (w *Expr) validateNode() error {
	switch w.Op {
	case OpEq, OpNe:
		if w.Value.IsNull() {
			return keyErr(w.Key, w.Op.String()+" needs a string, number or boolean")
		}
	case OpGt, OpGte, OpLt, OpLte:
		if w.Value.Kind != KindInt && w.Value.Kind != KindFloat {
			return keyErr(w.Key, w.Op.String()+" needs a number")
		}
	case OpIn, OpNin:
		vals := append([]Value(nil), w.Values...)
		c := &Expr{Op: w.Op, Key: w.Key, Values: vals}
		if err := c.normalizeList(); err != nil {
			return err
		}
		for i := range vals {
			if !vals[i].Equal(w.Values[i]) {
				return keyErr(w.Key, fmt.Sprintf("%s values must all be of one type (the first is a %s)", w.Op, vals[0].Kind))
			}
		}
	case OpAnd, OpOr:
		for _, c := range w.Children {
			if c == nil {
				return whereErr(w.Op.String() + " holds a nil clause")
			}
			if err := c.validateNode(); err != nil {
				return err
			}
		}
	default:
		return whereErr(fmt.Sprintf("unknown operator %s", w.Op))
	}
	return nil
}

// Validate checks an Expr built in Go (the constructors below or a literal)
// with the same rules Parse applies.
func (w *Expr) Validate() error {
	if w == nil {
		return nil
	}
	return w.validateNode()
}

// Eq, Ne, Gt, Gte, Lt, Lte, In, Nin, And and Or build Expr nodes.
func Eq(key string, v Value) *Expr  { return &Expr{Op: OpEq, Key: key, Value: v} }
func Ne(key string, v Value) *Expr  { return &Expr{Op: OpNe, Key: key, Value: v} }
func Gt(key string, v Value) *Expr  { return &Expr{Op: OpGt, Key: key, Value: v} }
func Gte(key string, v Value) *Expr { return &Expr{Op: OpGte, Key: key, Value: v} }
func Lt(key string, v Value) *Expr  { return &Expr{Op: OpLt, Key: key, Value: v} }
func Lte(key string, v Value) *Expr { return &Expr{Op: OpLte, Key: key, Value: v} }
func In(key string, vs ...Value) *Expr {
	return &Expr{Op: OpIn, Key: key, Values: vs}
}
func Nin(key string, vs ...Value) *Expr {
	return &Expr{Op: OpNin, Key: key, Values: vs}
}
func And(ws ...*Expr) *Expr { return &Expr{Op: OpAnd, Children: ws} }
func Or(ws ...*Expr) *Expr  { return &Expr{Op: OpOr, Children: ws} }

// MarshalJSON writes w in the where syntax (explicit operator form).
func (w *Expr) MarshalJSON() ([]byte, error) {
	if w == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	if err := w.appendJSON(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (w *Expr) appendJSON(b *bytes.Buffer) error {
	switch w.Op {
	case OpAnd, OpOr:
		fmt.Fprintf(b, `{"%s":[`, w.Op)
		for i, c := range w.Children {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := c.appendJSON(b); err != nil {
				return err
			}
		}
		b.WriteString("]}")
		return nil
	}
	kb, _ := json.Marshal(w.Key)
	fmt.Fprintf(b, `{%s:{"%s":`, kb, w.Op)
	if w.Op == OpIn || w.Op == OpNin {
		b.WriteByte('[')
		for i, v := range w.Values {
			if i > 0 {
				b.WriteByte(',')
			}
			vb, err := v.MarshalJSON()
			if err != nil {
				return err
			}
			b.Write(vb)
		}
		b.WriteByte(']')
	} else {
		vb, err := w.Value.MarshalJSON()
		if err != nil {
			return err
		}
		b.Write(vb)
	}
	b.WriteString("}}")
	return nil
}

// String returns the JSON form of w.
func (w *Expr) String() string {
	b, err := w.MarshalJSON()
	if err != nil {
		return fmt.Sprintf("<invalid where: %v>", err)
	}
	return string(b)
}
