package where

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// DocOp is the operator of a DocExpr node.
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

// DocExpr is a parsed, validated document filter (a where_document
// clause). A nil *DocExpr matches every record. The negated operators are
// complements over all records, so records without a document match them.
type DocExpr struct {
	Op       DocOp
	Text     string
	Children []*DocExpr
	re       *regexp.Regexp
}

// ParseDocument parses a JSON where_document clause. Empty input and JSON
// null give nil (no filter).
func ParseDocument(data []byte) (*DocExpr, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, nil
	}
	x, err := decodeJSONNumber(data)
	if err != nil {
		return nil, &Error{Clause: ClauseDocument, Reason: "not valid JSON", Err: err}
	}
	return DocumentFromJSON(x)
}

// DocumentFromJSON builds a DocExpr from a decoded JSON value.
func DocumentFromJSON(x any) (*DocExpr, error) {
	if x == nil {
		return nil, nil
	}
	return docFromJSON(x, 0)
}

func docFromJSON(x any, depth int) (*DocExpr, error) {
	k, v, err := clause(ClauseDocument, x, depth, MaxDepth)
	if err != nil {
		return nil, err
	}
	if k == "$and" || k == "$or" {
		d := &DocExpr{Op: DocAnd}
		if k == "$or" {
			d.Op = DocOr
		}
		d.Children, err = children(ClauseDocument, k, v, func(c any) (*DocExpr, error) { return docFromJSON(c, depth+1) })
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	var d *DocExpr
	switch k {
	case "$contains":
		d = &DocExpr{Op: DocContains}
	case "$not_contains":
		d = &DocExpr{Op: DocNotContains}
	case "$regex":
		d = &DocExpr{Op: DocRegex}
	case "$not_regex":
		d = &DocExpr{Op: DocNotRegex}
	default:
		return nil, docErr(fmt.Sprintf("unknown operator %q: use $contains, $not_contains, $regex, $not_regex, $and or $or", k))
	}
	s, ok := v.(string)
	if !ok {
		return nil, docErr(k + " needs a string")
	}
	d.Text = s
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}

// Contains, NotContains, Regex, NotRegex, DocAll and DocAny build DocExpr nodes.
func Contains(s string) *DocExpr    { return &DocExpr{Op: DocContains, Text: s} }
func NotContains(s string) *DocExpr { return &DocExpr{Op: DocNotContains, Text: s} }
func Regex(re string) *DocExpr      { return &DocExpr{Op: DocRegex, Text: re} }
func NotRegex(re string) *DocExpr   { return &DocExpr{Op: DocNotRegex, Text: re} }
func DocAll(ds ...*DocExpr) *DocExpr {
	return &DocExpr{Op: DocAnd, Children: ds}
}
func DocAny(ds ...*DocExpr) *DocExpr {
	return &DocExpr{Op: DocOr, Children: ds}
}

// Validate checks d and compiles its regular expressions. A pattern that
// does not compile gives an *Error with Pattern set and the regexp error as
// its cause.
func (d *DocExpr) Validate() error {
	if d == nil {
		return nil
	}
	switch d.Op {
	case DocContains, DocNotContains:
	case DocRegex, DocNotRegex:
		if d.re == nil {
			re, err := regexp.Compile(d.Text)
			if err != nil {
				return &Error{Clause: ClauseDocument, Reason: d.Op.String() + " needs an RE2 regular expression",
					Pattern: d.Text, Err: err}
			}
			d.re = re
		}
	case DocAnd, DocOr:
		for _, c := range d.Children {
			if c == nil {
				return docErr(d.Op.String() + " holds a nil clause")
			}
			if err := c.Validate(); err != nil {
				return err
			}
		}
	default:
		return docErr(fmt.Sprintf("unknown operator %s", d.Op))
	}
	return nil
}

// MarshalJSON writes d in the where_document syntax.
func (d *DocExpr) MarshalJSON() ([]byte, error) {
	if d == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	d.appendJSON(&b)
	return b.Bytes(), nil
}

func (d *DocExpr) appendJSON(b *bytes.Buffer) {
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
func (d *DocExpr) String() string {
	b, _ := d.MarshalJSON()
	return string(b)
}

// MatchLeaf evaluates the positive form of a leaf against a document: the
// substring or the regular expression found in doc ($not_contains and
// $not_regex report the same as their positive forms; the caller
// complements). d must have been validated (parsed, or Validate called).
func (d *DocExpr) MatchLeaf(doc string) bool {
	switch d.Op {
	case DocContains, DocNotContains:
		return strings.Contains(doc, d.Text)
	case DocRegex, DocNotRegex:
		return d.re.MatchString(doc)
	}
	return false
}
