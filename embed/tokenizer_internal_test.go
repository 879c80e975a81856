package embed

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// TestVocabDecoder holds the vocabulary's own decoder to encoding/json's
// map decoding, on the built-in model's vocabulary and on edge cases.
func TestVocabDecoder(t *testing.T) {
	inputs := []string{
		`{}`, ` { "a" : 1 , "b":2 } `, `{"\u00e9":3,"\"q\"":4,"\\":5,"x\/y":6}`, `null`,
		`{"a":1,}`, `{"a" 1}`, `{"a":1.5}`, `{"a":99999999999}`, `{"a":1`, `{"a`, `[1]`, `{"a":1}x`, `{,}`,
	}
	if b, err := os.ReadFile(filepath.Join("builtin", "minilm", "tokenizer.json")); err == nil {
		var doc struct {
			Model struct {
				Vocab json.RawMessage `json:"vocab"`
			} `json:"model"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, string(doc.Model.Vocab))
	}
	for _, in := range inputs {
		var want map[string]int32
		wantErr := json.Unmarshal([]byte(in), &want)
		var got vocabJSON
		gotErr := got.UnmarshalJSON([]byte(in))
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%.60q: error %v, encoding/json says %v", in, gotErr, wantErr)
		}
		if wantErr == nil && !maps.Equal(map[string]int32(got), want) {
			t.Fatalf("%.60q: %d entries differ from encoding/json's %d", in, len(got), len(want))
		}
	}
}
