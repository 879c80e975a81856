package where_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/vecstore/where"
)

func TestParseCanonical(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"n":1}`, `{"n":{"$eq":1}}`},
		{`{"a":{"$in":[2.5,1]}}`, `{"a":{"$in":[2.5,1.0]}}`},
		{`{"$and":[]}`, `{"$and":[]}`},
		{``, `null`},
		{`null`, `null`},
	} {
		w, err := where.Parse([]byte(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if got := w.String(); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		in     string
		clause where.Clause
		key    string
		reason string // a part of the reason
	}{
		{`[]`, where.ClauseWhere, "", "exactly one key"},
		{`{"a":1,"b":2}`, where.ClauseWhere, "", "exactly one key"},
		{`{"n":{"$gt":"x"}}`, where.ClauseWhere, "n", "$gt needs a number"},
		{`{"n":{"$like":1}}`, where.ClauseWhere, "n", "unknown operator"},
		{`{"n":{"$in":[1,"x"]}}`, where.ClauseWhere, "n", "one type"},
		{`{"n":null}`, where.ClauseWhere, "n", "must not be null"},
		{`{`, where.ClauseWhere, "", "not valid JSON"},
	} {
		_, err := where.Parse([]byte(tc.in))
		var we *where.Error
		if !errors.Is(err, where.ErrInvalid) || !errors.As(err, &we) {
			t.Fatalf("%s: got %v, want a *where.Error", tc.in, err)
		}
		if we.Clause != tc.clause || we.Key != tc.key || !strings.Contains(we.Reason, tc.reason) {
			t.Errorf("%s: got clause %q key %q reason %q", tc.in, we.Clause, we.Key, we.Reason)
		}
	}
}

func TestParseDocumentRegexError(t *testing.T) {
	_, err := where.ParseDocument([]byte(`{"$regex":"("}`))
	var we *where.Error
	if !errors.As(err, &we) || we.Clause != where.ClauseDocument || we.Pattern != "(" || we.Err == nil {
		t.Fatalf("got %#v", err)
	}
	d, err := where.ParseDocument([]byte(`{"$or":[{"$contains":"a"},{"$not_regex":"b+"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !d.Children[1].MatchLeaf("abbb") || d.Children[0].MatchLeaf("xyz") {
		t.Errorf("MatchLeaf disagrees with %s", d)
	}
}

// TestSchema: one walk checks the keys and gives operands their key's kind.
func TestSchema(t *testing.T) {
	s := where.Schema{Keys: map[string]where.Kind{"ts": where.KindInt, "conf": where.KindFloat, "ch": where.KindString}, MaxDepth: 2}
	w, err := s.Parse([]byte(`{"$and":[{"ts":{"$gte":5.0}},{"conf":{"$in":[1,2]}},{"ch":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := w.String(), `{"$and":[{"ts":{"$gte":5}},{"conf":{"$in":[1.0,2.0]}},{"ch":{"$eq":"x"}}]}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	for _, bad := range []string{
		`{"nope":1}`,          // unknown key
		`{"ch":{"$gt":1}}`,    // range on a string key
		`{"ts":{"$gte":5.5}}`, // fractional float for an int key
		`{"ch":1}`,            // wrong kind
		`{"$and":[{"$and":[{"$and":[{"$and":[]}]}]}]}`, // deeper than MaxDepth
	} {
		if _, err := s.Parse([]byte(bad)); !errors.Is(err, where.ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", bad, err)
		}
	}
}

func TestValueJSON(t *testing.T) {
	for _, tc := range []struct {
		in   string
		kind where.Kind
	}{{`2`, where.KindInt}, {`2.0`, where.KindFloat}, {`99999999999999999999`, where.KindFloat}, {`"s"`, where.KindString}, {`true`, where.KindBool}, {`null`, where.KindNull}} {
		var v where.Value
		if err := v.UnmarshalJSON([]byte(tc.in)); err != nil || v.Kind != tc.kind {
			t.Errorf("%s: kind %s, err %v; want %s", tc.in, v.Kind, err, tc.kind)
		}
	}
	var v where.Value
	if err := v.UnmarshalJSON([]byte(`[1]`)); err == nil {
		t.Error("an array became a value")
	}
}
