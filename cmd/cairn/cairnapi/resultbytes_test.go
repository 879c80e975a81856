package cairnapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/cairnapi"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// TestResultBytesBounded: a search's results and a listing's messages are
// cut at MaxResultBytes at a whole message, and the answer says so
// ("truncated": true, "max_result_bytes"); an unread listing's last_id
// names the last message listed; an answer within the bound carries
// neither field. Over a real HTTP server.
func TestResultBytesBounded(t *testing.T) {
	eng, err := sqlite.OpenEngine(context.Background(), t.TempDir(), engine.Options{}, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const bound = 250_000 // two of the 100 KB messages, not three
	h, err := cairnapi.New(cairnapi.Options{Engine: eng, MaxResultBytes: bound})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		_ = eng.Close()
	})
	s := &server{t: t, url: ts.URL + cairnapi.Prefix, eng: eng}
	for i := range 5 {
		content := fmt.Sprintf("needle %d ", i) + strings.Repeat(fmt.Sprintf("word%d ", i), 100_000/7)
		if code, w := s.do("POST", "/notes", `{"agent":"ann","content":"`+content+`"}`); code != 201 {
			t.Fatalf("note %d = %d %v", i, code, w)
		}
	}
	for _, c := range []struct {
		what, method, path, body, list string
		want                           int
		truncated                      bool
	}{
		{"search", "POST", "/search", `{"query":"needle","mode":"keyword","limit":5}`, "results", 2, true},
		{"search within the bound", "POST", "/search", `{"query":"needle","mode":"keyword","limit":2}`, "results", 2, false},
		{"notes", "GET", "/agents/ann/notes?limit=5", "", "results", 2, true},
		{"channel messages", "GET", "/channels/agent-notes:ann/messages?limit=5", "", "results", 2, true},
		{"unread", "GET", "/agents/bob/unread?limit=5", "", "messages", 2, true},
	} {
		code, out := s.do(c.method, c.path, c.body)
		got, _ := out[c.list].([]any)
		_, hasLimit := out["max_result_bytes"]
		if code != 200 || len(got) != c.want || (out["truncated"] == true) != c.truncated || hasLimit != c.truncated ||
			(c.truncated && out["max_result_bytes"] != float64(bound)) {
			t.Errorf("%s = %d, %d %s, truncated %v, max_result_bytes %v; want %d, truncated %v", c.what, code, len(got), c.list, out["truncated"], out["max_result_bytes"], c.want, c.truncated)
		}
		if c.what == "unread" && len(got) == 2 && out["last_id"] != got[1].(map[string]any)["id"] {
			t.Errorf("unread last_id = %v, want the last listed message's id %v", out["last_id"], got[1].(map[string]any)["id"])
		}
	}
}
