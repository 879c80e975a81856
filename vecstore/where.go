package vecstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// WhereOp is the operator of a Where node.
type WhereOp uint8

const (
	OpEq WhereOp = iota + 1
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

var whereOpNames = map[WhereOp]string{
	OpEq: "$eq", OpNe: "$ne", OpGt: "$gt", OpGte: "$gte", OpLt: "$lt", OpLte: "$lte",
	OpIn: "$in", OpNin: "$nin", OpAnd: "$and", OpOr: "$or",
}

func (o WhereOp) String() string {
	if s, ok := whereOpNames[o]; ok {
		return s
	}
	return fmt.Sprintf("WhereOp(%d)", uint8(o))
}

// Where is a parsed, validated metadata filter (Chroma's where language).
// A nil *Where matches every record.
//
// Comparison nodes have Key and Value ($eq..$lte) or Values ($in, $nin, all of
// one kind: the kind of the first element, with ints widened to floats when the
// first element is a float, as Chroma 1.0.0 does). $and/$or nodes have Children
// (possibly empty: $and [] matches everything, $or [] nothing).
type Where struct {
	Op       WhereOp
	Key      string
	Value    Value
	Values   []Value
	Children []*Where
}

// errWhere is Chroma's message for every where error.
func errWhere() *Error { return invalidf("Invalid where clause") }

// ParseWhere parses a JSON where filter. Empty input and JSON null give a nil
// *Where (no filter). Every shape or type error is ErrInvalid with Chroma's
// message "Invalid where clause".
func ParseWhere(data []byte) (*Where, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, nil
	}
	x, err := decodeJSONNumber(data)
	if err != nil {
		return nil, invalidf("Failed to parse the request body as JSON: %v", err)
	}
	return WhereFromJSON(x)
}

// WhereFromJSON builds a Where from a value decoded by encoding/json with
// UseNumber (json.Number for numbers). nil gives a nil *Where.
func WhereFromJSON(x any) (*Where, error) {
	if x == nil {
		return nil, nil
	}
	return whereFromJSON(x, 0)
}

const maxFilterDepth = 256

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

func whereFromJSON(x any, depth int) (*Where, error) {
	if depth > maxFilterDepth {
		return nil, errWhere()
	}
	obj, ok := x.(map[string]any)
	if !ok || len(obj) != 1 {
		return nil, errWhere()
	}
	for k, v := range obj {
		switch k {
		case "$and", "$or":
			arr, ok := v.([]any)
			if !ok {
				return nil, errWhere()
			}
			w := &Where{Op: OpAnd, Children: make([]*Where, 0, len(arr))}
			if k == "$or" {
				w.Op = OpOr
			}
			for _, c := range arr {
				cw, err := whereFromJSON(c, depth+1)
				if err != nil {
					return nil, err
				}
				w.Children = append(w.Children, cw)
			}
			return w, nil
		}
		// A key comparison: a scalar (implicit $eq) or {"$op": operand}.
		if sv, ok := valueFromJSON(v); ok {
			if sv.IsNull() {
				return nil, errWhere()
			}
			return &Where{Op: OpEq, Key: k, Value: sv}, nil
		}
		ops, ok := v.(map[string]any)
		if !ok || len(ops) != 1 {
			return nil, errWhere()
		}
		for opName, operand := range ops {
			return comparisonFromJSON(k, opName, operand)
		}
	}
	return nil, errWhere()
}

func comparisonFromJSON(key, opName string, operand any) (*Where, error) {
	var op WhereOp
	switch opName {
	case "$eq":
		op = OpEq
	case "$ne":
		op = OpNe
	case "$gt":
		op = OpGt
	case "$gte":
		op = OpGte
	case "$lt":
		op = OpLt
	case "$lte":
		op = OpLte
	case "$in":
		op = OpIn
	case "$nin":
		op = OpNin
	default:
		return nil, errWhere()
	}
	if op == OpIn || op == OpNin {
		arr, ok := operand.([]any)
		if !ok || len(arr) == 0 {
			return nil, errWhere()
		}
		vals := make([]Value, 0, len(arr))
		for _, e := range arr {
			v, ok := valueFromJSON(e)
			if !ok || v.IsNull() {
				return nil, errWhere()
			}
			vals = append(vals, v)
		}
		w := &Where{Op: op, Key: key, Values: vals}
		if err := w.normalizeList(); err != nil {
			return nil, err
		}
		return w, nil
	}
	v, ok := valueFromJSON(operand)
	if !ok || v.IsNull() {
		return nil, errWhere()
	}
	w := &Where{Op: op, Key: key, Value: v}
	if err := w.validateNode(); err != nil {
		return nil, err
	}
	return w, nil
}

// normalizeList converts an $in/$nin list to the kind of its first element.
func (w *Where) normalizeList() error {
	if len(w.Values) == 0 {
		return errWhere()
	}
	k := w.Values[0].Kind
	for i, v := range w.Values {
		switch {
		case v.Kind == k:
		case k == KindFloat && v.Kind == KindInt:
			w.Values[i] = Float(float64(v.Int))
		default:
			return errWhere()
		}
	}
	return nil
}

func (w *Where) validateNode() error {
	switch w.Op {
	case OpEq, OpNe:
		if w.Value.IsNull() {
			return errWhere()
		}
	case OpGt, OpGte, OpLt, OpLte:
		if w.Value.Kind != KindInt && w.Value.Kind != KindFloat {
			return errWhere()
		}
	case OpIn, OpNin:
		vals := append([]Value(nil), w.Values...)
		c := &Where{Op: w.Op, Values: vals}
		if err := c.normalizeList(); err != nil {
			return err
		}
		for i := range vals {
			if !vals[i].Equal(w.Values[i]) {
				return errWhere()
			}
		}
	case OpAnd, OpOr:
		for _, c := range w.Children {
			if c == nil {
				return errWhere()
			}
			if err := c.validateNode(); err != nil {
				return err
			}
		}
	default:
		return errWhere()
	}
	return nil
}

// Validate checks a Where built in Go (the constructors below or a literal)
// with the same rules ParseWhere applies.
func (w *Where) Validate() error {
	if w == nil {
		return nil
	}
	return w.validateNode()
}

// Eq, Ne, Gt, Gte, Lt, Lte, In, Nin, And and Or build Where nodes.
func Eq(key string, v Value) *Where  { return &Where{Op: OpEq, Key: key, Value: v} }
func Ne(key string, v Value) *Where  { return &Where{Op: OpNe, Key: key, Value: v} }
func Gt(key string, v Value) *Where  { return &Where{Op: OpGt, Key: key, Value: v} }
func Gte(key string, v Value) *Where { return &Where{Op: OpGte, Key: key, Value: v} }
func Lt(key string, v Value) *Where  { return &Where{Op: OpLt, Key: key, Value: v} }
func Lte(key string, v Value) *Where { return &Where{Op: OpLte, Key: key, Value: v} }
func In(key string, vs ...Value) *Where {
	return &Where{Op: OpIn, Key: key, Values: vs}
}
func Nin(key string, vs ...Value) *Where {
	return &Where{Op: OpNin, Key: key, Values: vs}
}
func And(ws ...*Where) *Where { return &Where{Op: OpAnd, Children: ws} }
func Or(ws ...*Where) *Where  { return &Where{Op: OpOr, Children: ws} }

// MarshalJSON writes w in Chroma's where syntax (explicit operator form).
func (w *Where) MarshalJSON() ([]byte, error) {
	if w == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	if err := w.appendJSON(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (w *Where) appendJSON(b *bytes.Buffer) error {
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
func (w *Where) String() string {
	b, err := w.MarshalJSON()
	if err != nil {
		return fmt.Sprintf("<invalid where: %v>", err)
	}
	return string(b)
}

// DocOp is the operator of a WhereDocument node.
type DocOp uint8

const (
	DocContains DocOp = iota + 1
	DocNotContains
	DocRegex
	DocNotRegex
	DocAnd
	DocOr
)

var docOpNames = map[DocOp]string{
	DocContains: "$contains", DocNotContains: "$not_contains", DocRegex: "$regex",
	DocNotRegex: "$not_regex", DocAnd: "$and", DocOr: "$or",
}

func (o DocOp) String() string {
	if s, ok := docOpNames[o]; ok {
		return s
	}
	return fmt.Sprintf("DocOp(%d)", uint8(o))
}

// WhereDocument is a parsed, validated document filter (Chroma's
// where_document language). A nil *WhereDocument matches every record.
// $contains is a case-sensitive literal substring test; $regex is an
// unanchored RE2 search (Go regexp; Chroma uses the Rust regex crate, whose
// syntax is the same family: no backreferences, no look-around). The negated
// operators are complements over all records, so records without a document
// match them.
type WhereDocument struct {
	Op       DocOp
	Text     string
	Children []*WhereDocument
	re       *regexp.Regexp
}

func errWhereDoc() *Error { return invalidf("Invalid where document clause") }

// ParseWhereDocument parses a JSON where_document filter. Empty input and JSON
// null give nil (no filter).
func ParseWhereDocument(data []byte) (*WhereDocument, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, nil
	}
	x, err := decodeJSONNumber(data)
	if err != nil {
		return nil, invalidf("Failed to parse the request body as JSON: %v", err)
	}
	return WhereDocumentFromJSON(x)
}

// WhereDocumentFromJSON builds a WhereDocument from a decoded JSON value.
func WhereDocumentFromJSON(x any) (*WhereDocument, error) {
	if x == nil {
		return nil, nil
	}
	return whereDocFromJSON(x, 0)
}

func whereDocFromJSON(x any, depth int) (*WhereDocument, error) {
	if depth > maxFilterDepth {
		return nil, errWhereDoc()
	}
	obj, ok := x.(map[string]any)
	if !ok || len(obj) != 1 {
		return nil, errWhereDoc()
	}
	for k, v := range obj {
		switch k {
		case "$and", "$or":
			arr, ok := v.([]any)
			if !ok {
				return nil, errWhereDoc()
			}
			d := &WhereDocument{Op: DocAnd, Children: make([]*WhereDocument, 0, len(arr))}
			if k == "$or" {
				d.Op = DocOr
			}
			for _, c := range arr {
				cd, err := whereDocFromJSON(c, depth+1)
				if err != nil {
					return nil, err
				}
				d.Children = append(d.Children, cd)
			}
			return d, nil
		}
		s, ok := v.(string)
		if !ok {
			return nil, errWhereDoc()
		}
		var d *WhereDocument
		switch k {
		case "$contains":
			d = &WhereDocument{Op: DocContains, Text: s}
		case "$not_contains":
			d = &WhereDocument{Op: DocNotContains, Text: s}
		case "$regex":
			d = &WhereDocument{Op: DocRegex, Text: s}
		case "$not_regex":
			d = &WhereDocument{Op: DocNotRegex, Text: s}
		default:
			return nil, errWhereDoc()
		}
		if err := d.Validate(); err != nil {
			return nil, err
		}
		return d, nil
	}
	return nil, errWhereDoc()
}

// Contains, NotContains, Regex, NotRegex, DocAll and DocAny build WhereDocument nodes.
func Contains(s string) *WhereDocument    { return &WhereDocument{Op: DocContains, Text: s} }
func NotContains(s string) *WhereDocument { return &WhereDocument{Op: DocNotContains, Text: s} }
func Regex(re string) *WhereDocument      { return &WhereDocument{Op: DocRegex, Text: re} }
func NotRegex(re string) *WhereDocument   { return &WhereDocument{Op: DocNotRegex, Text: re} }
func DocAll(ds ...*WhereDocument) *WhereDocument {
	return &WhereDocument{Op: DocAnd, Children: ds}
}
func DocAny(ds ...*WhereDocument) *WhereDocument {
	return &WhereDocument{Op: DocOr, Children: ds}
}

// Validate checks d (compiling regular expressions). The regex error message
// starts with Chroma's prefix "Regex syntax errror: regex parse error:" (sic)
// followed by Go's description, which differs in detail from Rust's.
func (d *WhereDocument) Validate() error {
	if d == nil {
		return nil
	}
	switch d.Op {
	case DocContains, DocNotContains:
	case DocRegex, DocNotRegex:
		if d.re == nil {
			re, err := regexp.Compile(d.Text)
			if err != nil {
				msg := err.Error()
				msg = strings.TrimPrefix(msg, "error parsing regexp: ")
				return invalidf("Regex syntax errror: regex parse error:\n    %s\nerror: %s", d.Text, msg)
			}
			d.re = re
		}
	case DocAnd, DocOr:
		for _, c := range d.Children {
			if c == nil {
				return errWhereDoc()
			}
			if err := c.Validate(); err != nil {
				return err
			}
		}
	default:
		return errWhereDoc()
	}
	return nil
}

// MarshalJSON writes d in Chroma's where_document syntax.
func (d *WhereDocument) MarshalJSON() ([]byte, error) {
	if d == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	d.appendJSON(&b)
	return b.Bytes(), nil
}

func (d *WhereDocument) appendJSON(b *bytes.Buffer) {
	switch d.Op {
	case DocAnd, DocOr:
		fmt.Fprintf(b, `{"%s":[`, d.Op)
		for i, c := range d.Children {
			if i > 0 {
				b.WriteByte(',')
			}
			c.appendJSON(b)
		}
		b.WriteString("]}")
		return
	}
	tb, _ := json.Marshal(d.Text)
	fmt.Fprintf(b, `{"%s":%s}`, d.Op, tb)
}

// String returns the JSON form of d.
func (d *WhereDocument) String() string {
	b, _ := d.MarshalJSON()
	return string(b)
}

// matchDoc evaluates a positive leaf against a document.
func (d *WhereDocument) matchLeaf(doc string) bool {
	switch d.Op {
	case DocContains, DocNotContains:
		return strings.Contains(doc, d.Text)
	case DocRegex, DocNotRegex:
		return d.re.MatchString(doc)
	}
	return false
}
