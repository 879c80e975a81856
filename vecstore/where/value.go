package where

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the type of a metadata Value. Int and Float are distinct types, as in
// Chroma: the JSON literal decides (2 is an int, 2.0 a float).
type Kind uint8

const (
	KindNull Kind = iota // only in upsert/update metadata: delete the key
	KindString
	KindInt
	KindFloat
	KindBool
)

func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindString:
		return "string"
	case KindInt:
		return "int"
	case KindFloat:
		return "float"
	case KindBool:
		return "bool"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Value is one metadata value. The zero Value is null.
type Value struct {
	Kind  Kind
	Str   string
	Int   int64
	Float float64
	Bool  bool
}

// String, Int, Float, Bool and Null construct Values.
func String(s string) Value  { return Value{Kind: KindString, Str: s} }
func Int(i int64) Value      { return Value{Kind: KindInt, Int: i} }
func Float(f float64) Value  { return Value{Kind: KindFloat, Float: f} }
func Bool(b bool) Value      { return Value{Kind: KindBool, Bool: b} }
func Null() Value            { return Value{} }
func (v Value) IsNull() bool { return v.Kind == KindNull }

// Equal reports whether v and w have the same kind and value.
func (v Value) Equal(w Value) bool {
	if v.Kind != w.Kind {
		return false
	}
	switch v.Kind {
	case KindString:
		return v.Str == w.Str
	case KindInt:
		return v.Int == w.Int
	case KindFloat:
		return v.Float == w.Float || (math.IsNaN(v.Float) && math.IsNaN(w.Float))
	case KindBool:
		return v.Bool == w.Bool
	}
	return true
}

// MarshalJSON writes v as Chroma does: floats always carry a decimal point or
// exponent (2.0, 1e+20), so that they read back as floats.
func (v Value) MarshalJSON() ([]byte, error) {
	switch v.Kind {
	case KindNull:
		return []byte("null"), nil
	case KindString:
		return json.Marshal(v.Str)
	case KindInt:
		return strconv.AppendInt(nil, v.Int, 10), nil
	case KindFloat:
		return appendFloatJSON(nil, v.Float)
	case KindBool:
		return strconv.AppendBool(nil, v.Bool), nil
	}
	return nil, fmt.Errorf("where: bad value kind %d", v.Kind)
}

func appendFloatJSON(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("where: float %v is not representable in JSON", f)
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return append(b, s...), nil
}

// errNotScalar refuses an array or object where a metadata value belongs.
var errNotScalar = errors.New("where: a metadata value must be a string, integer, float, boolean or null")

// UnmarshalJSON reads a scalar JSON value, keeping int and float distinct.
// Arrays and objects are an error.
func (v *Value) UnmarshalJSON(data []byte) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return err
	}
	nv, ok := ValueFromJSON(x)
	if !ok {
		return errNotScalar
	}
	*v = nv
	return nil
}

// ValueFromJSON converts a decoded JSON scalar (decoded with UseNumber).
func ValueFromJSON(x any) (Value, bool) {
	switch t := x.(type) {
	case nil:
		return Null(), true
	case string:
		return String(t), true
	case bool:
		return Bool(t), true
	case json.Number:
		return numberValue(string(t))
	}
	return Value{}, false
}

// numberValue classifies a JSON number literal as Chroma does: no '.', 'e' or
// 'E' means int (when it fits in int64), otherwise float.
func numberValue(s string) (Value, bool) {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return Int(i), true
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return Value{}, false
	}
	return Float(f), true
}
