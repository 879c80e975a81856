package chromaapi

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/engine"
)

// Request bodies are decoded in two passes, as Chroma's framework does:
//
//  1. syntax: the body must be one well-formed JSON value (UTF-8, nesting at
//     most maxJSONDepth, no NaN). A failure is 400 InvalidArgumentError
//     "Failed to parse the request body as JSON: ...".
//  2. shape: the decoded tree (numbers kept as json.Number, so 1 and 1.0 stay
//     distinct) is matched against the request type. A failure is 422
//     ChromaError "Failed to deserialize the JSON body into the target type:
//     <path>: ...", with serde's wording for the common cases.

// maxJSONDepth is serde_json's recursion limit: deeper documents are a
// syntax error in Chroma.
const maxJSONDepth = 128

// parseBody checks the syntax of body and returns its decoded tree.
func parseBody(body []byte) (any, *apiError) {
	if !utf8.Valid(body) {
		return nil, errSyntax("invalid unicode code point")
	}
	if d := jsonDepth(body); d > maxJSONDepth {
		return nil, errSyntax("recursion limit exceeded")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errSyntax(syntaxMessage(body, err))
	}
	if msg := checkEscapes(body); msg != "" {
		return nil, errSyntax(msg)
	}
	if !numbersInRange(v) {
		return nil, errSyntax("number out of range")
	}
	if dec.More() {
		return nil, errSyntax("trailing characters")
	}
	if k := duplicateTopKey(body); k != "" {
		return nil, shapeErr("", "duplicate field `%s`", k)
	}
	// Decode stops after the first value; anything but whitespace after it is
	// an error (More reports only the start of another value).
	rest := body[dec.InputOffset():]
	if len(bytes.TrimLeft(rest, " \t\r\n")) != 0 {
		return nil, errSyntax("trailing characters")
	}
	return v, nil
}

// numbersInRange reports whether every number in v fits a float64, as
// serde_json requires (integers beyond 64 bits are read as floats; a float
// beyond the f64 range is an error).
func numbersInRange(v any) bool {
	switch t := v.(type) {
	case json.Number:
		s := string(t)
		if len(s) < 309 && !strings.ContainsAny(s, "eE") {
			return true
		}
		_, err := strconv.ParseFloat(s, 64)
		return err == nil || !isRangeErr(err) || !isOverflow(s)
	case []any:
		for _, x := range t {
			if !numbersInRange(x) {
				return false
			}
		}
	case map[string]any:
		for _, x := range t {
			if !numbersInRange(x) {
				return false
			}
		}
	}
	return true
}

// isOverflow tells an overflowing literal (±Inf) from an underflowing one
// (read as 0 by both parsers).
func isOverflow(s string) bool {
	f, _ := strconv.ParseFloat(s, 64)
	return math.IsInf(f, 0)
}

// checkEscapes finds \u escapes that are lone UTF-16 surrogates, which
// serde_json refuses and encoding/json silently replaces.
func checkEscapes(body []byte) string {
	if !bytes.Contains(body, []byte(`\u`)) {
		return ""
	}
	inStr := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !inStr {
			if c == '"' {
				inStr = true
			}
			continue
		}
		switch c {
		case '"':
			inStr = false
		case '\\':
			if i+1 < len(body) && body[i+1] == 'u' && i+5 < len(body) {
				r, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 16)
				if err == nil && r >= 0xD800 && r < 0xDC00 {
					// a high surrogate must be followed by \u + a low one
					if i+12 > len(body) || body[i+6] != '\\' || body[i+7] != 'u' {
						return "unexpected end of hex escape"
					}
					lo, err := strconv.ParseUint(string(body[i+8:i+12]), 16, 16)
					if err != nil || lo < 0xDC00 || lo > 0xDFFF {
						return "lone leading surrogate in hex escape"
					}
					i += 11
					continue
				}
				if err == nil && r >= 0xDC00 && r <= 0xDFFF {
					return "lone leading surrogate in hex escape"
				}
			}
			i++
		}
	}
	return ""
}

// duplicateTopKey returns a key that occurs twice in the top-level object of
// a valid JSON body (serde refuses duplicate struct fields; encoding/json
// keeps the last), or "".
func duplicateTopKey(body []byte) string {
	i := 0
	for i < len(body) && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r') {
		i++
	}
	if i >= len(body) || body[i] != '{' {
		return ""
	}
	var seen []string
	depth := 0
	expectKey := false
	for ; i < len(body); i++ {
		switch c := body[i]; c {
		case '{', '[':
			depth++
			expectKey = depth == 1
		case '}', ']':
			depth--
		case ',':
			expectKey = depth == 1
		case '"':
			j := i + 1
			for j < len(body) && body[j] != '"' {
				if body[j] == '\\' {
					j++
				}
				j++
			}
			if depth == 1 && expectKey {
				var key string
				if json.Unmarshal(body[i:j+1], &key) == nil {
					for _, k := range seen {
						if k == key {
							return key
						}
					}
					seen = append(seen, key)
				}
				expectKey = false
			}
			i = j
		}
	}
	return ""
}

// jsonDepth returns the maximum nesting of arrays and objects in body
// (strings skipped); it does not validate.
func jsonDepth(body []byte) int {
	depth, maxDepth := 0, 0
	inStr := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if inStr {
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '[', '{':
			depth++
			if depth > maxDepth {
				maxDepth = depth
			}
		case ']', '}':
			depth--
		}
	}
	return maxDepth
}

// syntaxMessage renders a Go JSON syntax error in serde_json's words where
// they are known, with serde's "at line L column C" position.
func syntaxMessage(body []byte, err error) string {
	var off int64 = -1
	msg := err.Error()
	switch e := err.(type) {
	case *json.SyntaxError:
		off = e.Offset
		switch {
		case e.Error() == "unexpected end of JSON input":
			msg = "EOF while parsing a value"
		case strings.HasPrefix(msg, "invalid character") && strings.Contains(msg, "looking for beginning of value"):
			msg = "expected value"
		case strings.Contains(msg, "after object key"):
			msg = "expected `:`"
		case strings.Contains(msg, "after object key:value pair"):
			msg = "expected `,` or `}`"
		case strings.Contains(msg, "after array element"):
			msg = "expected `,` or `]`"
		case strings.Contains(msg, "looking for beginning of object key string"):
			msg = "key must be a string"
		}
	default:
		if err.Error() == "EOF" || err.Error() == "unexpected EOF" {
			msg = "EOF while parsing a value"
			off = int64(len(body))
		}
	}
	if off < 0 {
		return msg
	}
	if off > int64(len(body)) {
		off = int64(len(body))
	}
	line, col := 1, 0
	for _, c := range body[:off] {
		if c == '\n' {
			line++
			col = 0
		} else {
			col++
		}
	}
	return fmt.Sprintf("%s at line %d column %d", msg, line, col)
}

// shapeErr is a 422 for a value of the wrong shape at path.
func shapeErr(path, format string, args ...any) *apiError {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	return &apiError{status: 422, name: "ChromaError",
		message: "Failed to deserialize the JSON body into the target type: " + msg}
}

// describe names a JSON value as serde's "invalid type" errors do.
func describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("boolean `%t`", t)
	case string:
		return fmt.Sprintf("string %q", t)
	case json.Number:
		s := string(t)
		if !strings.ContainsAny(s, ".eE") {
			if strings.HasPrefix(s, "-") {
				return "integer `" + s + "`"
			}
			return "integer `" + s + "`"
		}
		f, _ := strconv.ParseFloat(s, 64)
		return "floating point `" + string(appendFloat(nil, f, 64)) + "`"
	case []any:
		return "sequence"
	case map[string]any:
		return "map"
	}
	return "value"
}

func invalidType(path string, v any, expected string) *apiError {
	return shapeErr(path, "invalid type: %s, expected %s", describe(v), expected)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func indexPath(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// object is the top-level request body.
type object struct {
	m    map[string]any
	name string // serde's struct name for error messages
}

func asObject(v any, name string) (object, *apiError) {
	m, ok := v.(map[string]any)
	if !ok {
		return object{}, invalidType("", v, "struct "+name)
	}
	return object{m: m, name: name}, nil
}

// field returns the value of key, treating null as absent (serde's Option).
func (o object) field(key string) (any, bool) {
	v, ok := o.m[key]
	if !ok || v == nil {
		return nil, false
	}
	return v, true
}

func missing(key string) *apiError { return shapeErr("", "missing field `%s`", key) }

func asString(v any, path string) (string, *apiError) {
	s, ok := v.(string)
	if !ok {
		return "", invalidType(path, v, "a string")
	}
	return s, nil
}

func asBool(v any, path string) (bool, *apiError) {
	b, ok := v.(bool)
	if !ok {
		return false, invalidType(path, v, "a boolean")
	}
	return b, nil
}

// asUint parses a u32 (limit, offset, n_results) as serde does.
func asUint(v any, path string, bits int) (int, *apiError) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, invalidType(path, v, fmt.Sprintf("u%d", bits))
	}
	s := string(n)
	if strings.ContainsAny(s, ".eE") {
		return 0, invalidType(path, v, fmt.Sprintf("u%d", bits))
	}
	u, err := strconv.ParseUint(s, 10, bits)
	if err != nil {
		return 0, shapeErr(path, "invalid value: integer `%s`, expected u%d", s, bits)
	}
	if u > math.MaxInt32 && bits == 32 {
		// fits u32 but not a Go int on 32-bit platforms; fine on 64-bit.
		return int(u), nil
	}
	return int(u), nil
}

// asInt parses an integer configuration value (usize in Chroma).
func asInt(v any, path string) (int, *apiError) {
	n, ok := v.(json.Number)
	if !ok || strings.ContainsAny(string(n), ".eE") {
		return 0, invalidType(path, v, "usize")
	}
	u, err := strconv.ParseUint(string(n), 10, 63)
	if err != nil {
		return 0, shapeErr(path, "invalid value: integer `%s`, expected usize", string(n))
	}
	return int(u), nil
}

func asFloat64(v any, path string) (float64, *apiError) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, invalidType(path, v, "f64")
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return 0, shapeErr(path, "invalid value: %s, expected f64", string(n))
	}
	return f, nil
}

func asStrings(v any, path string) ([]string, *apiError) {
	a, ok := v.([]any)
	if !ok {
		return nil, invalidType(path, v, "a sequence")
	}
	out := make([]string, len(a))
	for i, x := range a {
		s, ok := x.(string)
		if !ok {
			return nil, invalidType(indexPath(path, i), x, "a string")
		}
		out[i] = s
	}
	return out, nil
}

// asNullableStrings decodes Vec<Option<String>>.
func asNullableStrings(v any, path string) ([]*string, *apiError) {
	a, ok := v.([]any)
	if !ok {
		return nil, invalidType(path, v, "a sequence")
	}
	out := make([]*string, len(a))
	for i, x := range a {
		if x == nil {
			continue
		}
		s, ok := x.(string)
		if !ok {
			return nil, invalidType(indexPath(path, i), x, "a string")
		}
		out[i] = &s
	}
	return out, nil
}

// asFloat32 converts a JSON number as serde does for f32: parsed as f64,
// then rounded to f32.
func asFloat32(v any, path string) (float32, *apiError) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, invalidType(path, v, "f32")
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !isRangeErr(err) {
		return 0, invalidType(path, v, "f32")
	}
	return float32(f), nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func asVector(v any, path string) ([]float32, *apiError) {
	a, ok := v.([]any)
	if !ok {
		return nil, invalidType(path, v, "a sequence")
	}
	out := make([]float32, len(a))
	for i, x := range a {
		f, err := asFloat32(x, indexPath(path, i))
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}

// asVectors decodes Vec<Vec<f32>> (query_embeddings).
func asVectors(v any, path string) ([][]float32, *apiError) {
	a, ok := v.([]any)
	if !ok {
		return nil, invalidType(path, v, "a sequence")
	}
	out := make([][]float32, len(a))
	for i, x := range a {
		vec, err := asVector(x, indexPath(path, i))
		if err != nil {
			return nil, err
		}
		out[i] = vec
	}
	return out, nil
}

// asEmbeddings decodes add/upsert/update embeddings: either float arrays or
// base64 strings of little-endian float32s (Chroma's untagged
// EmbeddingsPayload). nullable allows null entries (update).
func asEmbeddings(v any, path string, nullable bool) ([][]float32, *apiError) {
	a, ok := v.([]any)
	if !ok {
		return nil, shapeErr(path, "data did not match any variant of untagged enum EmbeddingsPayload")
	}
	out := make([][]float32, len(a))
	// The variant is decided by the whole array: all (nullable) float arrays,
	// or all (nullable) strings.
	allArrays, allStrings := true, true
	for _, x := range a {
		switch x.(type) {
		case nil:
			if !nullable {
				allArrays, allStrings = false, false
			}
		case []any:
			allStrings = false
		case string:
			allArrays = false
		default:
			allArrays, allStrings = false, false
		}
	}
	if allArrays {
		for i, x := range a {
			if x == nil {
				continue
			}
			xs := x.([]any)
			vec := make([]float32, len(xs))
			for j, y := range xs {
				n, ok := y.(json.Number)
				if !ok {
					return nil, shapeErr(path, "data did not match any variant of untagged enum EmbeddingsPayload")
				}
				f, err := strconv.ParseFloat(string(n), 64)
				if err != nil && !isRangeErr(err) {
					return nil, shapeErr(path, "data did not match any variant of untagged enum EmbeddingsPayload")
				}
				vec[j] = float32(f)
			}
			out[i] = vec
		}
		return out, nil
	}
	if !allStrings {
		return nil, shapeErr(path, "data did not match any variant of untagged enum EmbeddingsPayload")
	}
	for i, x := range a {
		if x == nil {
			continue
		}
		raw, msg := decodeBase64(x.(string))
		if msg != "" {
			return nil, &apiError{status: 400, name: "InvalidArgumentError",
				message: "Base64 decoding error: Invalid base64 string: " + msg}
		}
		if len(raw)%4 != 0 {
			return nil, &apiError{status: 400, name: "InvalidArgumentError",
				message: fmt.Sprintf("Base64 decoding error: byte length %d is not a multiple of 4", len(raw))}
		}
		vec := make([]float32, len(raw)/4)
		for j := range vec {
			vec[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
		}
		out[i] = vec
	}
	return out, nil
}

// decodeBase64 decodes standard padded base64, with the error wording of
// the Rust base64 crate that Chroma uses.
func decodeBase64(s string) ([]byte, string) {
	n := len(s)
	pad := 0
	for pad < 2 && n-pad > 0 && s[n-pad-1] == '=' {
		pad++
	}
	for i := 0; i < n-pad; i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/') {
			return nil, fmt.Sprintf("Invalid symbol %d, offset %d.", c, i)
		}
	}
	if n%4 != 0 {
		if (n-pad)%4 == 1 {
			return nil, fmt.Sprintf("Invalid input length: %d", n-pad)
		}
		return nil, "Invalid padding"
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		var ce base64.CorruptInputError
		if errors.As(err, &ce) && int(ce) < n {
			return nil, fmt.Sprintf("Invalid last symbol %d, offset %d.", s[ce], int(ce))
		}
		return nil, "Invalid padding"
	}
	return raw, ""
}

// metaValue converts a JSON scalar into a metadata value. Integer literals
// that do not fit an int64 become floats, as in Chroma.
func metaValue(v any, path string, allowNull bool) (engine.MetaValue, *apiError) {
	switch t := v.(type) {
	case nil:
		if allowNull {
			return engine.MetaValue{Kind: engine.MetaNull}, nil
		}
	case string:
		return engine.MetaValue{Kind: engine.MetaString, Str: t}, nil
	case bool:
		return engine.MetaValue{Kind: engine.MetaBool, Bool: t}, nil
	case json.Number:
		s := string(t)
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return engine.MetaValue{Kind: engine.MetaInt, Int: i}, nil
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err == nil {
			return engine.MetaValue{Kind: engine.MetaFloat, Float: f}, nil
		}
	}
	name := "MetadataValue"
	if allowNull {
		name = "UpdateMetadataValue"
	}
	return engine.MetaValue{}, shapeErr(path, "data did not match any variant of untagged enum %s", name)
}

// asMetadata decodes a flat metadata map.
func asMetadata(v any, path string, allowNull bool) (engine.Metadata, *apiError) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalidType(path, v, "a map")
	}
	md := make(engine.Metadata, len(m))
	for k, x := range m {
		mv, err := metaValue(x, joinPath(path, k), allowNull)
		if err != nil {
			return nil, err
		}
		md[k] = mv
	}
	return md, nil
}

// asMetadatas decodes Vec<Option<Metadata>>.
func asMetadatas(v any, path string, allowNull bool) ([]engine.Metadata, *apiError) {
	a, ok := v.([]any)
	if !ok {
		return nil, invalidType(path, v, "a sequence")
	}
	out := make([]engine.Metadata, len(a))
	for i, x := range a {
		if x == nil {
			continue
		}
		md, err := asMetadata(x, indexPath(path, i), allowNull)
		if err != nil {
			return nil, err
		}
		out[i] = md
	}
	return out, nil
}

var includeNames = [...]engine.Include{engine.IncludeDistances, engine.IncludeDocuments,
	engine.IncludeEmbeddings, engine.IncludeMetadatas, engine.IncludeURIs}

// asInclude decodes an include list (unknown names are 422, as serde's enum).
func asInclude(v any, path string) ([]engine.Include, *apiError) {
	a, ok := v.([]any)
	if !ok {
		return nil, invalidType(path, v, "a sequence")
	}
	out := make([]engine.Include, len(a))
	for i, x := range a {
		s, ok := x.(string)
		if !ok {
			return nil, invalidType(indexPath(path, i), x, "string or map")
		}
		found := false
		for _, n := range includeNames {
			if string(n) == s {
				found = true
				break
			}
		}
		if !found {
			return nil, shapeErr(indexPath(path, i),
				"unknown variant `%s`, expected one of `distances`, `documents`, `embeddings`, `metadatas`, `uris`", s)
		}
		out[i] = engine.Include(s)
	}
	return out, nil
}
