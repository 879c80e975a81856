package chromaapi

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
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

// maxJSONDepth is the deepest nesting of arrays and objects that Chroma's
// parser (serde_json, recursion limit 128) accepts; one more is a syntax
// error there.
const maxJSONDepth = 127

// parseBody checks the syntax of body and returns its decoded tree.
func parseBody(body []byte) (any, *apiError) { return parseJSON(body) }

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
		// The element path is built only on error: this is the hot loop of
		// every query.
		n, ok := x.(json.Number)
		if !ok {
			return nil, invalidType(indexPath(path, i), x, "f32")
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil && !isRangeErr(err) {
			return nil, invalidType(indexPath(path, i), x, "f32")
		}
		out[i] = float32(f)
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
	// Fast path: well-formed input (what clients send). Only a refusal pays
	// for the character-by-character scan that words the error like Rust.
	if len(s)%4 == 0 {
		if raw, err := base64.StdEncoding.Strict().DecodeString(s); err == nil {
			return raw, ""
		}
	}
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
func metaValue(v any, path string, allowNull bool) (where.Value, *apiError) {
	if mv, ok := where.ValueFromJSON(v); ok && (allowNull || !mv.IsNull()) {
		return mv, nil
	}
	name := "MetadataValue"
	if allowNull {
		name = "UpdateMetadataValue"
	}
	return where.Value{}, shapeErr(path, "data did not match any variant of untagged enum %s", name)
}

// asMetadata decodes a flat metadata map.
func asMetadata(v any, path string, allowNull bool) (chroma.Metadata, *apiError) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalidType(path, v, "a map")
	}
	md := make(chroma.Metadata, len(m))
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
func asMetadatas(v any, path string, allowNull bool) ([]chroma.Metadata, *apiError) {
	a, ok := v.([]any)
	if !ok {
		return nil, invalidType(path, v, "a sequence")
	}
	out := make([]chroma.Metadata, len(a))
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

var includeNames = [...]chroma.Include{chroma.IncludeDistances, chroma.IncludeDocuments,
	chroma.IncludeEmbeddings, chroma.IncludeMetadatas, chroma.IncludeURIs}

// asInclude decodes an include list (unknown names are 422, as serde's enum).
func asInclude(v any, path string) ([]chroma.Include, *apiError) {
	a, ok := v.([]any)
	if !ok {
		return nil, invalidType(path, v, "a sequence")
	}
	out := make([]chroma.Include, len(a))
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
		out[i] = chroma.Include(s)
	}
	return out, nil
}
