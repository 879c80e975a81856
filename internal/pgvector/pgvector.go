package pgvector

import (
	"fmt"
	"strconv"
	"strings"
)

// Text is v in pgvector's text form. Every component is written in the
// shortest form that parses back as the same float32 ('g', 32 bits), so
// Parse(Text(v)) is v bit for bit, ±0 and subnormals included. NaN and
// ±Inf are written as NaN and ±Inf, which PostgreSQL refuses for a vector
// column: the caller checks finiteness where a user's vector comes in.
func Text(v []float32) string {
	b := make([]byte, 0, len(v)*10+2)
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
	}
	return string(append(b, ']'))
}

// Parse reads pgvector's text form: "[" components separated by commas
// "]", surrounding space allowed. "[]" is the empty vector. A malformed
// text is an error naming what is wrong, never a panic.
func Parse(s string) ([]float32, error) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, fmt.Errorf("pgvector: not a vector: %.40q", s)
	}
	s = s[1 : len(s)-1]
	if s == "" {
		return []float32{}, nil
	}
	parts := strings.Split(s, ",")
	out := make([]float32, len(parts))
	for i, p := range parts {
		f, err := strconv.ParseFloat(p, 32)
		if err != nil {
			return nil, fmt.Errorf("pgvector: vector component %d: %w", i, err)
		}
		out[i] = float32(f)
	}
	return out, nil
}
