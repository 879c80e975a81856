package cairnapi_test

import (
	"testing"
	"time"
)

// TestFaultCreatedAt: a bad or out-of-window created_at is refused with
// 400 naming created_at, and nothing is written; a sane one is kept.
func TestFaultCreatedAt(t *testing.T) {
	s := newServer(t)
	msg := func(at string) string {
		return `{"channel":"project:p:decisions","sender":"a","content":"dated ` + at + `","created_at":"` + at + `"}`
	}
	for _, at := range []string{"not a time", "9999-12-31T23:59:59Z", time.Now().Add(49 * time.Hour).UTC().Format(time.RFC3339), "1970-01-01T00:00:01Z", "0001-01-01T00:00:00Z"} {
		code, body := s.do("POST", "/messages", msg(at))
		if code != 400 || body["field"] != "created_at" {
			t.Errorf("created_at %q: got %d %v, want 400 naming created_at", at, code, body)
		}
	}
	if code, body := s.do("POST", "/messages", `{"channel":"project:p:decisions","sender":"a","content":"x","created_at":12}`); code != 400 || body["field"] != "created_at" {
		t.Errorf("created_at 12: got %d %v", code, body)
	}
	if n := s.messageCount(); n != 0 {
		t.Fatalf("%d messages written by bad created_at", n)
	}
	if code, body := s.do("POST", "/messages", msg("2024-05-06T07:08:09Z")); code != 201 && code != 200 {
		t.Errorf("a sane created_at: %d %v", code, body)
	}
}
