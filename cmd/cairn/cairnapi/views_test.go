package cairnapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/cmd/cairn/cairnapi"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// newServerWith is newServer with the given options (Engine is filled in).
func newServerWith(t *testing.T, opts cairnapi.Options) *server {
	t.Helper()
	eng, err := sqlite.OpenEngine(context.Background(), t.TempDir(), engine.Options{}, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts.Engine = eng
	h, err := cairnapi.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		if err := eng.Close(); err != nil {
			t.Error(err)
		}
	})
	return &server{t: t, url: ts.URL + cairnapi.Prefix, eng: eng}
}

func TestNeighboursAndTimeline(t *testing.T) {
	s := newServer(t)
	for i := range 4 {
		if code, res := s.do("POST", "/messages", fmt.Sprintf(`{"channel":"team-log","sender":"bob","content":"step %d"}`, i)); code != http.StatusCreated {
			t.Fatalf("store: %d %v", code, res)
		}
	}
	s.do("POST", "/notes", `{"agent":"bob","content":"a note"}`)
	code, n := s.do("GET", "/messages/2/neighbours?before=1&after=1", "")
	if code != 200 || n["channel_id"] != "team-log" || len(n["before"].([]any)) != 1 || len(n["after"].([]any)) != 1 ||
		n["more_before"] != false || n["more_after"] != true {
		t.Errorf("neighbours = %d %v", code, n)
	}
	if after := n["after"].([]any); len(after) == 1 && after[0].(map[string]any)["content"] != "step 2" {
		t.Errorf("the next message = %v", after[0])
	}
	code, tl := s.do("GET", "/stats/timeline?bucket=hour&buckets=2", "")
	if code != 200 || tl["bucket_seconds"] != 3600.0 {
		t.Fatalf("timeline = %d %v", code, tl)
	}
	got := map[string][]any{}
	for _, x := range tl["series"].([]any) {
		m := x.(map[string]any)
		got[m["channel_type"].(string)] = m["counts"].([]any)
	}
	if len(got) != 2 || got["channel"][1] != 4.0 || got["agent-notes"][1] != 1.0 {
		t.Errorf("timeline series = %v", got)
	}
	for _, c := range []struct{ path, field string }{
		{"/stats/timeline?bucket=year", "bucket"},
		{"/stats/timeline?buckets=0", "buckets"},
		{"/stats/timeline?since=yesterday", "since"},
		{"/messages/2/neighbours?before=101", "before"},
		{"/messages/x/neighbours", "id"},
	} {
		if code, res := s.do("GET", c.path, ""); code != 400 || res["field"] != c.field {
			t.Errorf("%s: %d %v, want 400 naming %s", c.path, code, res, c.field)
		}
	}
	if code, res := s.do("GET", "/messages/99/neighbours", ""); code != 404 || res["error"] != "not_found" {
		t.Errorf("neighbours of an unknown id: %d %v", code, res)
	}
}

// TestGCReviewedThenApplied: a dry run lists what the policies would
// forget and deletes nothing; a real run given other ids than gc would now
// forget deletes nothing (409); given the reviewed ids it forgets them.
func TestGCReviewedThenApplied(t *testing.T) {
	s := newServerWith(t, cairnapi.Options{GC: ops.GCOptions{
		Policies: []ops.RetentionPolicy{{Name: "scratch", Channels: []string{"scratch"}, MaxAge: 24 * time.Hour}},
		MaxBytes: 1 << 30,
	}})
	old := time.Now().Add(-72 * time.Hour).UTC().Format(time.RFC3339)
	for i := range 2 {
		s.do("POST", "/messages", fmt.Sprintf(`{"channel":"scratch","sender":"bob","content":"old scratch %d","created_at":%q}`, i, old))
	}
	s.do("POST", "/messages", `{"channel":"scratch","sender":"bob","content":"fresh scratch"}`)
	s.do("POST", "/messages", fmt.Sprintf(`{"channel":"team-log","sender":"bob","content":"kept","created_at":%q}`, old))

	code, st := s.do("GET", "/stats", "")
	if code != 200 || st["storage_budget_bytes"] != float64(1<<30) || st["messages"] != 4.0 {
		t.Errorf("stats = %d %v", code, st)
	}
	code, rep := s.do("POST", "/gc", `{"dry_run":true}`)
	if code != 200 || rep["dry_run"] != true || len(rep["messages"].([]any)) != 2 {
		t.Fatalf("dry run = %d %v", code, rep)
	}
	if n := s.messageCount(); n != 4 {
		t.Fatalf("a dry run deleted: %d messages left", n)
	}
	if code, res := s.do("POST", "/gc", `{"expect_messages":[1]}`); code != http.StatusConflict || res["error"] != "conflict" {
		t.Errorf("real run with other ids = %d %v", code, res)
	}
	if n := s.messageCount(); n != 4 {
		t.Fatalf("a refused run deleted: %d messages left", n)
	}
	code, rep = s.do("POST", "/gc", `{"expect_messages":[2,1]}`)
	if code != 200 || rep["dry_run"] != false || len(rep["messages"].([]any)) != 2 {
		t.Fatalf("real run = %d %v", code, rep)
	}
	if code, _ := s.do("GET", "/messages/1", ""); code != 404 {
		t.Errorf("a forgotten message answers %d", code)
	}
	if code, res := s.do("POST", "/gc", `{"dry_run":"yes"}`); code != 400 || res["field"] != "dry_run" {
		t.Errorf("bad dry_run = %d %v", code, res)
	}
}
