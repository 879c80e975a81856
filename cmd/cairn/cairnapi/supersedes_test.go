package cairnapi_test

import (
	"strconv"
	"testing"
)

// TestSupersedesOverHTTP: a write naming a missing message in supersedes
// is refused with 400 naming supersedes and writes nothing; a correction
// is stored, the read of the original names it, and searches leave the
// original out unless include_superseded.
func TestSupersedesOverHTTP(t *testing.T) {
	s := newServer(t)
	code, body := s.do("POST", "/notes", `{"agent":"bob","content":"the build runs on Jenkins","supersedes":4242}`)
	if code != 400 || body["field"] != "supersedes" {
		t.Fatalf("missing supersedes: %d %v", code, body)
	}
	if n := s.messageCount(); n != 0 {
		t.Fatalf("%d messages written by a refused write", n)
	}
	_, first := s.do("POST", "/notes", `{"agent":"bob","content":"the build runs on Jenkins"}`)
	old := int64(first["id"].(float64))
	code, fix := s.do("POST", "/messages", `{"channel":"agent-notes:bob","sender":"bob","content":"the build runs on GitHub Actions","supersedes":`+strconv.FormatInt(old, 10)+`}`)
	if code != 201 {
		t.Fatalf("correction: %d %v", code, fix)
	}
	code, m := s.do("GET", "/messages/"+strconv.FormatInt(old, 10), "")
	if code != 200 || m["superseded_by"] != fix["id"] {
		t.Fatalf("read of the original: %d %v", code, m)
	}
	for _, c := range []struct {
		body string
		n    int
	}{{`{"query":"build runs"}`, 1}, {`{"query":"build runs","include_superseded":true}`, 2}} {
		code, res := s.do("POST", "/search", c.body)
		if rs, _ := res["results"].([]any); code != 200 || len(rs) != c.n {
			t.Errorf("%s: %d, %d results, want %d", c.body, code, len(rs), c.n)
		}
	}
}
