package httpguard_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/httpguard"
)

func TestBearerToken(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"BEARER a.b-c_d~e+f/g=", "a.b-c_d~e+f/g=", true},
		{"Bearer  abc", "", false},
		{"Bearer abc def", "", false},
		{"Bearer ", "", false},
		{"Bearer", "", false},
		{"Basic abc", "", false},
		{"Bearerabc", "", false},
		{"Bearer abc\x00", "", false},
	} {
		got, ok := httpguard.BearerToken(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestAuthorized(t *testing.T) {
	req := func(h map[string][]string) *http.Request {
		r := httptest.NewRequest("GET", "/", nil)
		for k, vs := range h {
			for _, v := range vs {
				r.Header.Add(k, v)
			}
		}
		return r
	}
	for _, tc := range []struct {
		h    map[string][]string
		want bool
	}{
		{map[string][]string{"Authorization": {"Bearer s3cret"}}, true},
		{map[string][]string{"X-Chroma-Token": {"s3cret"}}, true},
		{map[string][]string{"Authorization": {"Bearer s3cret"}, "X-Chroma-Token": {"s3cret"}}, true},
		{map[string][]string{"Authorization": {"Bearer s3cret"}, "X-Chroma-Token": {"other"}}, false},
		{map[string][]string{"Authorization": {"Bearer s3cret", "Bearer s3cret"}}, false},
		{map[string][]string{"Authorization": {"Bearer s3cre"}}, false},
		{nil, false},
	} {
		if got := httpguard.Authorized(req(tc.h), "s3cret"); got != tc.want {
			t.Errorf("Authorized(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
	if !httpguard.Authorized(req(nil), "") {
		t.Error("no token configured: refused")
	}
}

func TestIsJSON(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json": true, "application/json; charset=utf-8": true, "Application/JSON": true,
		"application/vnd.api+json": true, "": false, "text/plain": false, "application/jsonx": false,
		"application/x-www-form-urlencoded": false, "multipart/form-data; boundary=x": false, "application/json;;": false,
	} {
		if got := httpguard.IsJSON(ct); got != want {
			t.Errorf("IsJSON(%q) = %v, want %v", ct, got, want)
		}
	}
}

// TestBudget: announced bodies reserve up front, chunked bodies as they are
// read; release gives everything back.
func TestBudget(t *testing.T) {
	b := httpguard.NewBudget(100)
	r1 := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("a", 60)))
	release1, err := b.Track(r1)
	if err != nil || b.InUse() != 60 {
		t.Fatalf("first body: %v, in use %d", err, b.InUse())
	}
	r2 := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("b", 60)))
	if _, err := b.Track(r2); !errors.Is(err, httpguard.ErrBodyBudget) {
		t.Fatalf("second announced body: %v, want ErrBodyBudget", err)
	}
	r3 := httptest.NewRequest("POST", "/", io.NopCloser(strings.NewReader(strings.Repeat("c", 60))))
	r3.ContentLength = -1 // chunked
	release3, err := b.Track(r3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(r3.Body); !errors.Is(err, httpguard.ErrBodyBudget) {
		t.Fatalf("chunked body over the budget: %v, want ErrBodyBudget", err)
	}
	release3()
	release1()
	if b.InUse() != 0 {
		t.Errorf("in use after release: %d", b.InUse())
	}
	if _, err := b.Track(r2); err != nil {
		t.Errorf("after release: %v", err)
	}
}
