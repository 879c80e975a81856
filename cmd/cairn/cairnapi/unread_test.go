package cairnapi_test

import (
	"fmt"
	"net/http"
	"testing"
)

func TestUnreadAndMarkRead(t *testing.T) {
	s := newServer(t)
	var last float64
	for i, sender := range []string{"bob", "ann", "carol"} {
		code, res := s.do("POST", "/notes", fmt.Sprintf(`{"agent":%q,"project":"cairn","content":"note %d"}`, sender, i))
		if code != http.StatusCreated {
			t.Fatalf("note: %d %v", code, res)
		}
		last = res["id"].(float64)
	}
	code, u := s.do("GET", "/agents/ann/unread?project=cairn", "")
	if code != http.StatusOK || u["unread"] != 2.0 || u["last_id"] != last || len(u["messages"].([]any)) != 2 {
		t.Fatalf("unread: %d %v", code, u)
	}
	code, u = s.do("GET", "/agents/ann/unread?limit=1", "")
	if code != http.StatusOK || u["unread"] != 2.0 || u["last_id"] != 1.0 {
		t.Fatalf("unread, limit 1: %d %v", code, u)
	}
	code, cur := s.do("POST", "/agents/ann/read", `{"up_to":1}`)
	if code != http.StatusOK || cur["last_read_id"] != 1.0 || cur["agent"] != "ann" {
		t.Fatalf("mark read: %d %v", code, cur)
	}
	code, res := s.do("POST", "/search", `{"unread_by":"ann"}`)
	if rs := res["results"].([]any); code != http.StatusOK || len(rs) != 1 || rs[0].(map[string]any)["message"].(map[string]any)["id"] != last {
		t.Fatalf("search unread_by: %d %v", code, res)
	}
	code, cur = s.do("POST", "/agents/ann/read", `{"project":"cairn"}`)
	if code != http.StatusOK || cur["last_read_id"] != last || cur["project"] != "cairn" {
		t.Fatalf("mark the project read: %d %v", code, cur)
	}
	if code, u = s.do("GET", "/agents/ann/unread", ""); code != http.StatusOK || u["unread"] != 0.0 || len(u["messages"].([]any)) != 0 {
		t.Fatalf("unread after marking: %d %v", code, u)
	}

	for _, c := range []struct {
		method, path, body string
		status             int
		field              string
	}{
		{"POST", "/agents/ann/read", `{"up_to":99}`, http.StatusBadRequest, "up_to"},
		{"POST", "/agents/ann/read", `{"up_to":-1}`, http.StatusBadRequest, "up_to"},
		{"POST", "/agents/ann/read", `{"channel":"general","project":"cairn"}`, http.StatusBadRequest, "channel/project"},
		{"POST", "/agents/ann/read", `{"upto":3}`, http.StatusBadRequest, "upto"},
		{"POST", "/agents/a%20b/read", `{}`, http.StatusBadRequest, "agent"},
		{"GET", "/agents/ann/unread?limit=0", "", http.StatusBadRequest, "limit"},
		{"GET", "/agents/ann/unread?channel=nowhere", "", http.StatusNotFound, ""},
		{"POST", "/search", `{"unread_by":"a b"}`, http.StatusBadRequest, "unread_by"},
	} {
		code, res := s.do(c.method, c.path, c.body)
		if code != c.status || c.field != "" && res["field"] != c.field {
			t.Errorf("%s %s %s: %d %v, want %d naming %q", c.method, c.path, c.body, code, res, c.status, c.field)
		}
	}
}
