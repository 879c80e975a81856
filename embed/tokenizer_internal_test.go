package embed

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
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
		if wantErr == nil && !sameVocab(got.t, want) {
			t.Fatalf("%.60q: entries differ from encoding/json's %d", in, len(want))
		}
	}
}

// sameVocab reports whether table v holds exactly the entries of m.
func sameVocab(v *vocabTable, m map[string]int32) bool {
	if v == nil {
		return len(m) == 0
	}
	if v.size() != len(m) {
		return false
	}
	for k, id := range m {
		if got, ok := v.get(k); !ok || got != id {
			return false
		}
	}
	_, found := v.get("\x00 not a token")
	return !found
}

// TestCutVocab holds the vocabulary cut out of a tokenizer.json (the rest
// decoded by encoding/json) to the document decoded whole, and checks that
// documents not laid out so are left to the whole decoding.
func TestCutVocab(t *testing.T) {
	docs := []string{
		`{"model":{"type":"WordPiece","vocab":{"a":1,"b":2},"unk_token":"a"},"vocab":{"x":9}}`,
		`{"added_tokens":[{"model":{"vocab":{"z":1}}}],"model":{"vocab":{"a\u00e9":1},"vocab":{"b":2}}}`,
		`{"model":{"type":"WordPiece","vocab":null}}`,
		`{"model":{"vocab":{"a":1.5}}}`,
		`{"model":[{"vocab":{"a":1}}]}`,
		`{"mod\u0065l":{"vocab":{"a":1}}}`,
		`{"model":{"vocab":{"a":1}}`,
	}
	if b, err := os.ReadFile(filepath.Join("builtin", "minilm", "tokenizer.json")); err == nil {
		docs = append(docs, string(b))
	}
	for _, doc := range docs {
		var whole tokenizerJSON
		wholeErr := json.Unmarshal([]byte(doc), &whole)
		rest, vocab, ok, err := cutVocab([]byte(doc))
		if err != nil || !ok {
			if wholeErr == nil && err != nil {
				t.Fatalf("%.60q: cut fails (%v), the whole document decodes", doc, err)
			}
			continue
		}
		var cut tokenizerJSON
		cutErr := json.Unmarshal(rest, &cut)
		if (cutErr == nil) != (wholeErr == nil) {
			t.Fatalf("%.60q: cut document error %v, whole %v", doc, cutErr, wholeErr)
		}
		if wholeErr != nil {
			continue
		}
		want := map[string]int32{}
		if v := whole.Model.Vocab.t; v != nil {
			for _, k := range v.slots {
				if k != 0 {
					want[v.key(k-1)] = v.ids[k-1]
				}
			}
		}
		if cut.Model.Vocab.t != nil || !sameVocab(vocab, want) {
			t.Fatalf("%.60q: the cut vocabulary differs from the whole document's", doc)
		}
		whole.Model.Vocab, cut.Model.Vocab = vocabJSON{}, vocabJSON{}
		if !reflect.DeepEqual(whole, cut) {
			t.Fatalf("%.60q: the rest decodes to %+v, the whole document to %+v", doc, cut, whole)
		}
	}
}
