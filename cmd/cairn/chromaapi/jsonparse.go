package chromaapi

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// parseJSON parses a request body into a tree of nil, bool, string,
// json.Number (the literal, so 1 and 1.0 stay distinct), []any and
// map[string]any, checking what Chroma's JSON parser (serde_json) checks:
// UTF-8, nesting at most maxJSONDepth, numbers within the float64 range,
// no lone UTF-16 surrogates, nothing after the value, and no duplicate
// field in the top-level object (every request body is a struct there).
// Syntax errors carry serde's wording and "at line L column C" position.
//
// It is written by hand because encoding/json into interface values is the
// slowest step of a request carrying float arrays (Python clients send
// embeddings that way), and because it needs those extra checks anyway.
// Strings without escapes share the body's memory.
func parseJSON(body []byte) (any, *apiError) {
	v, perr := parseTree(body)
	if perr == nil {
		return v, nil
	}
	if perr.shape != nil {
		return nil, perr.shape
	}
	msg := perr.msg
	if perr.pos >= 0 {
		msg = positioned(msg, body, perr.pos)
	}
	if len(perr.path) > 0 {
		var b strings.Builder
		for i := len(perr.path) - 1; i >= 0; i-- {
			seg := perr.path[i]
			if seg.index >= 0 {
				b.WriteString("[" + strconv.Itoa(seg.index) + "]")
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg.key)
		}
		msg = b.String() + ": " + msg
	}
	return nil, errSyntax(msg)
}

// jsonErr is a syntax error found by the parser: its message, its byte
// position (-1: none) and the path of the value it occurred in, innermost
// segment first (serde_path_to_error prefixes that path).
type jsonErr struct {
	msg   string
	pos   int
	path  []pathSeg
	shape *apiError // a shape error found while parsing (duplicate field)
}

// pathSeg is an object key, or an array index when index >= 0.
type pathSeg struct {
	key   string
	index int
}

// in adds the segment of the enclosing container to an error coming from
// one of its values.
func (e *jsonErr) in(seg pathSeg) *jsonErr {
	if e.shape == nil {
		e.path = append(e.path, seg)
	}
	return e
}

func parseTree(body []byte) (any, *jsonErr) {
	if !utf8.Valid(body) {
		// serde reports the position of the bad byte.
		i := 0
		for i < len(body) {
			r, n := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return nil, &jsonErr{msg: "invalid unicode code point", pos: i + 1}
	}
	p := &jparser{s: string(body)}
	p.ws()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i < len(p.s) {
		return nil, &jsonErr{msg: "trailing characters", pos: -1} // serde gives no position here
	}
	return v, nil
}

type jparser struct {
	s     string
	i     int
	depth int
}

func positioned(msg string, body []byte, pos int) string {
	if pos > len(body) {
		pos = len(body)
	}
	line, col := 1, 0
	for _, c := range body[:pos] {
		if c == '\n' {
			line++
			col = 0
		} else {
			col++
		}
	}
	return fmt.Sprintf("%s at line %d column %d", msg, line, col)
}

// fail reports a syntax error whose position is pos bytes into the body
// (serde counts the offending byte as read).
func (p *jparser) fail(msg string, pos int) *jsonErr {
	return &jsonErr{msg: msg, pos: pos}
}

func (p *jparser) eof(what string) *jsonErr {
	return p.fail("EOF while parsing "+what, len(p.s))
}

func (p *jparser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jparser) value() (any, *jsonErr) {
	if p.i >= len(p.s) {
		return nil, p.eof("a value")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, p.fail("expected value", p.i+1)
}

func (p *jparser) literal(word string) *jsonErr {
	for k := 0; k < len(word); k++ {
		if p.i >= len(p.s) {
			return p.eof("a value")
		}
		if p.s[p.i] != word[k] {
			return p.fail("expected ident", p.i+1)
		}
		p.i++
	}
	return nil
}

func (p *jparser) enter() *jsonErr {
	p.depth++
	if p.depth > maxJSONDepth {
		return p.fail("recursion limit exceeded", p.i+1)
	}
	return nil
}

func (p *jparser) object() (any, *jsonErr) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	top := p.depth == 1
	p.i++ // '{'
	m := map[string]any{}
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		p.depth--
		return m, nil
	}
	first := true
	for {
		p.ws()
		if p.i >= len(p.s) {
			if first {
				return nil, p.eof("an object")
			}
			return nil, p.eof("a value")
		}
		first = false
		if p.s[p.i] != '"' {
			if p.s[p.i] == '}' {
				return nil, p.fail("trailing comma", p.i+1)
			}
			return nil, p.fail("key must be a string", p.i+1)
		}
		kv, err := p.str()
		if err != nil {
			return nil, err
		}
		key := kv.(string)
		p.ws()
		if p.i >= len(p.s) {
			return nil, p.eof("an object")
		}
		if p.s[p.i] != ':' {
			return nil, p.fail("expected `:`", p.i+1)
		}
		p.i++
		p.ws()
		v, err := p.value()
		if err != nil {
			return nil, err.in(pathSeg{key: key, index: -1})
		}
		if _, dup := m[key]; dup && top {
			return nil, &jsonErr{shape: shapeErr("", "duplicate field `%s`", key)}
		}
		m[key] = v
		p.ws()
		if p.i >= len(p.s) {
			return nil, p.eof("an object")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			p.depth--
			return m, nil
		default:
			return nil, p.fail("expected `,` or `}`", p.i+1)
		}
	}
}

func (p *jparser) array() (any, *jsonErr) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.i++ // '['
	a := make([]any, 0, 4)
	p.ws()
	if p.i >= len(p.s) {
		return nil, p.eof("a list")
	}
	if p.s[p.i] == ']' {
		p.i++
		p.depth--
		return a, nil
	}
	for {
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			return nil, p.fail("trailing comma", p.i+1)
		}
		v, err := p.value()
		if err != nil {
			return nil, err.in(pathSeg{index: len(a)})
		}
		a = append(a, v)
		p.ws()
		if p.i >= len(p.s) {
			return nil, p.eof("a list")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			p.depth--
			return a, nil
		default:
			return nil, p.fail("expected `,` or `]`", p.i+1)
		}
	}
}

// str parses a string starting at the opening quote.
func (p *jparser) str() (any, *jsonErr) {
	p.i++ // '"'
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			v := p.s[start:p.i]
			p.i++
			return v, nil
		case c == '\\':
			return p.strEscaped(start)
		case c < 0x20:
			return nil, p.fail("control character (\\u0000-\\u001F) found while parsing a string", p.i+1)
		}
		p.i++
	}
	return nil, p.eof("a string")
}

func (p *jparser) strEscaped(start int) (any, *jsonErr) {
	var b strings.Builder
	b.WriteString(p.s[start:p.i])
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c < 0x20:
			return nil, p.fail("control character (\\u0000-\\u001F) found while parsing a string", p.i+1)
		case c != '\\':
			b.WriteByte(c)
			p.i++
			continue
		}
		p.i++ // '\\'
		if p.i >= len(p.s) {
			return nil, p.eof("a string")
		}
		e := p.s[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xDC00 {
					return nil, p.fail("lone leading surrogate in hex escape", p.i)
				}
				if p.i+1 >= len(p.s) || p.s[p.i] != '\\' || p.s[p.i+1] != 'u' {
					return nil, p.fail("unexpected end of hex escape", min(p.i+1, len(p.s)))
				}
				p.i += 2
				lo, err := p.hex4()
				if err != nil {
					return nil, err
				}
				if lo < 0xDC00 || lo > 0xDFFF {
					return nil, p.fail("lone leading surrogate in hex escape", p.i)
				}
				r = utf16.DecodeRune(r, lo)
			}
			b.WriteRune(r)
		default:
			return nil, p.fail("invalid escape", p.i)
		}
	}
	return nil, p.eof("a string")
}

func (p *jparser) hex4() (rune, *jsonErr) {
	if p.i+4 > len(p.s) {
		return 0, p.eof("a string")
	}
	var r rune
	for k := 0; k < 4; k++ {
		c := p.s[p.i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, p.fail("invalid escape", p.i+1)
		}
		r = r<<4 | rune(d)
		p.i++
	}
	return r, nil
}

// number parses a JSON number literal and keeps it as written.
func (p *jparser) number() (any, *jsonErr) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i >= len(p.s) {
		return nil, p.eof("a value")
	}
	if p.s[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, p.fail("invalid number", p.i+1)
	}
	isFloat := false
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		isFloat = true
		if digits() == 0 {
			if p.i >= len(p.s) {
				return nil, p.eof("a value")
			}
			return nil, p.fail("invalid number", p.i+1)
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		isFloat = true
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			if p.i >= len(p.s) {
				return nil, p.eof("a value")
			}
			return nil, p.fail("invalid number", p.i+1)
		}
	}
	lit := p.s[start:p.i]
	// An integer of up to 308 digits always fits a float64; anything else
	// must not overflow (serde_json parses every number as f64 at worst).
	if isFloat || len(lit) > 308 {
		if f, err := strconv.ParseFloat(lit, 64); err != nil && math.IsInf(f, 0) {
			return nil, p.fail("number out of range", p.i)
		}
	}
	return json.Number(lit), nil
}
