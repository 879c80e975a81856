package chromaapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseJSONErrors(t *testing.T) {
	// Messages as Chroma 1.0.0 (serde_json) words them; positions included.
	for _, tc := range []struct{ body, want string }{
		{``, "EOF while parsing a value at line 1 column 0"},
		{`{"name":"t1",`, "EOF while parsing a value at line 1 column 13"},
		{`{"name":"t2","metadata":{"a":NaN}}`, "metadata.a: expected value at line 1 column 30"},
		{`{"ids":["a"]} x`, "trailing characters"},
		{`{"ids":["a"],`, "EOF while parsing a value at line 1 column 13"},
		{`{"ids":["a"]`, "EOF while parsing an object at line 1 column 12"},
		{`{`, "EOF while parsing an object at line 1 column 1"},
		{`{"ids":NaN}`, "ids: expected value at line 1 column 8"},
		{`{"ids":["a"],"embeddings":[[1e400]]}`, "embeddings[0][0]: number out of range at line 1 column 33"},
		{`{"ids":["a"],"embeddings":[[1,2,3]],"metadatas":[{"k":1e400}]}`, "metadatas[0].k: number out of range at line 1 column 59"},
		{`{'ids':1}`, "key must be a string at line 1 column 2"},
		{"{\n\"a\" 1}", "expected `:` at line 2 column 5"},
		{`[1,]`, "trailing comma at line 1 column 4"},
		{`{"a":1,}`, "trailing comma at line 1 column 8"},
		{`{"a":tru}`, "a: expected ident at line 1 column 9"},
		{`{"a":1e400}`, "a: number out of range at line 1 column 10"},
		{`{"a":01}`, "expected `,` or `}` at line 1 column 7"},
		{`{"a":"\ud800"}`, "a: unexpected end of hex escape at line 1 column 13"},
		{`{"a":"\udc00"}`, "a: lone leading surrogate in hex escape at line 1 column 12"},
		{"{\"a\":\"\x01\"}", "a: control character (\\u0000-\\u001F) found while parsing a string at line 1 column 7"},
		{"{\"a\":\"\xff\"}", "invalid unicode code point at line 1 column 7"},
		{"[[" + strings.Repeat("[", 126) + strings.Repeat("]", 128), "[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: recursion limit exceeded at line 1 column 128"},
	} {
		_, err := parseJSON([]byte(tc.body))
		if err == nil {
			t.Errorf("parseJSON(%q) succeeded, want %q", tc.body, tc.want)
			continue
		}
		if got := strings.TrimPrefix(err.message, "Failed to parse the request body as JSON: "); got != tc.want || err.status != 400 {
			t.Errorf("parseJSON(%q) = %d %q, want 400 %q", tc.body, err.status, got, tc.want)
		}
	}
	if _, err := parseJSON([]byte(`{"ids":["a"],"ids":["b"]}`)); err == nil || err.status != 422 ||
		!strings.Contains(err.message, "duplicate field `ids`") {
		t.Errorf("duplicate top-level field: %v, want 422 duplicate field", err)
	}
	if _, err := parseJSON([]byte(`{"m":{"k":1,"k":2}}`)); err != nil {
		t.Errorf("duplicate nested key: %v, want accepted (last wins, as in a map)", err)
	}
}

// FuzzParseJSON checks the hand-written parser against encoding/json: both
// accept the same valid documents and build the same tree (ignoring the
// extra checks serde makes and encoding/json does not).
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.0,-3e2,"x\n\u00e9\ud83d\ude00"],"b":{"c":null,"d":true}}`, `[]`, `{}`, `"s"`,
		`0`, `-0.0`, `1E+2`, `[[[1]]]`, `{"a":"\/\b\f\r\t"}`, ` {"a" : 1 } `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, aerr := parseJSON([]byte(s))
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.UseNumber()
		var want any
		err := dec.Decode(&want)
		if err == nil && dec.More() {
			err = errTrailing
		}
		if err == nil {
			if _, terr := dec.Token(); terr == nil {
				err = errTrailing
			}
		}
		if aerr == nil && err != nil {
			t.Fatalf("parseJSON accepted %q, encoding/json refuses it: %v", s, err)
		}
		if aerr != nil {
			return // serde-only refusals (depth, range, surrogates, duplicates, invalid UTF-8) are fine
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("parseJSON(%q) = %#v, encoding/json = %#v", s, got, want)
		}
	})
}

var errTrailing = &json.SyntaxError{}

// BenchmarkParseBody compares the hand-written parser with encoding/json
// (UseNumber into interface values) on an add body of 100 vectors of
// dimension 384 in JSON floats, as Python clients send them.
func BenchmarkParseBody(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"ids":[`)
	for i := 0; i < 100; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`"id` + strings.Repeat("x", i%7) + `"`)
	}
	sb.WriteString(`],"embeddings":[`)
	for i := 0; i < 100; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte('[')
		for j := 0; j < 384; j++ {
			if j > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString("-0.0123456")
		}
		sb.WriteByte(']')
	}
	sb.WriteString(`]}`)
	body := []byte(sb.String())
	b.Run("parseJSON", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for i := 0; i < b.N; i++ {
			if _, err := parseJSON(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for i := 0; i < b.N; i++ {
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
