package pgcollections

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// encodeMetadata returns md as a jsonb object of plain values and the sorted
// keys holding floats (a jsonb array), both nil for no metadata.
func encodeMetadata(md chroma.Metadata, field string) (obj, floatKeys []byte, err error) {
	if len(md) == 0 {
		return nil, nil, nil
	}
	plain := make(map[string]any, len(md))
	var fk []string
	for k, v := range md {
		if strings.ContainsRune(k, 0) {
			return nil, nil, nulRefusal(field)
		}
		switch v.Kind {
		case where.KindString:
			if strings.ContainsRune(v.Str, 0) {
				return nil, nil, nulRefusal(field)
			}
			plain[k] = v.Str
		case where.KindBool:
			plain[k] = v.Bool
		case where.KindInt:
			plain[k] = v.Int
		case where.KindFloat:
			if math.IsNaN(v.Float) || math.IsInf(v.Float, 0) {
				return nil, nil, &chroma.Error{Class: chroma.ErrInvalid, Rule: RuleUnstorable, Field: field, Key: k,
					Reason: k + ": PostgreSQL's jsonb cannot hold NaN or infinite values"}
			}
			plain[k] = json.Number(strconv.FormatFloat(v.Float, 'g', -1, 64))
			fk = append(fk, k)
		default:
			continue // Null: deleted by the merge before this point
		}
	}
	if obj, err = json.Marshal(plain); err != nil {
		return nil, nil, err
	}
	if len(fk) > 0 {
		slices.Sort(fk)
		if floatKeys, err = json.Marshal(fk); err != nil {
			return nil, nil, err
		}
	}
	return obj, floatKeys, nil
}

// RuleUnstorable refuses a value PostgreSQL cannot store: the NUL
// character in text, a non-finite float in jsonb (Field, Key). Surfaces
// without a wording of their own show the error's text.
const RuleUnstorable chroma.Rule = "unstorable"

func nulRefusal(field string) error {
	return &chroma.Error{Class: chroma.ErrInvalid, Rule: RuleUnstorable, Field: field,
		Reason: "PostgreSQL cannot store the NUL character"}
}

// decodeMetadata reverses encodeMetadata (nil obj gives nil).
func decodeMetadata(obj, floatKeys []byte) (chroma.Metadata, error) {
	if obj == nil {
		return nil, nil
	}
	var fk []string
	if floatKeys != nil {
		if err := json.Unmarshal(floatKeys, &fk); err != nil {
			return nil, fmt.Errorf("pgcollections: float_keys: %w", err)
		}
	}
	d := json.NewDecoder(bytes.NewReader(obj))
	d.UseNumber()
	var plain map[string]any
	if err := d.Decode(&plain); err != nil {
		return nil, fmt.Errorf("pgcollections: metadata: %w", err)
	}
	if len(plain) == 0 {
		return nil, nil
	}
	md := make(chroma.Metadata, len(plain))
	for k, x := range plain {
		switch x := x.(type) {
		case string:
			md[k] = where.String(x)
		case bool:
			md[k] = where.Bool(x)
		case json.Number:
			if slices.Contains(fk, k) {
				f, err := strconv.ParseFloat(string(x), 64)
				if err != nil {
					return nil, fmt.Errorf("pgcollections: metadata %s: %w", k, err)
				}
				md[k] = where.Float(f)
			} else {
				i, err := strconv.ParseInt(string(x), 10, 64)
				if err != nil {
					return nil, fmt.Errorf("pgcollections: metadata %s: %w", k, err)
				}
				md[k] = where.Int(i)
			}
		default:
			return nil, fmt.Errorf("pgcollections: metadata %s: unexpected %T", k, x)
		}
	}
	return md, nil
}
