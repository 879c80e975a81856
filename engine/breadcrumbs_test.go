package engine_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestBreadcrumbShapesOfBothDesigns stores the breadcrumbs of the
// Claude-Slack design and of the implementation plan as their examples
// write them, and a kind of neither, and reads them back as given.
func TestBreadcrumbShapesOfBothDesigns(t *testing.T) {
	e, _ := enginetest.Open(t, engine.Options{})
	cases := map[string]string{
		"claude-slack": `{"breadcrumbs": {
			"modified_files": ["src/auth/jwt.py:45-89"], "created_files": ["src/auth/refresh.py"],
			"deleted_files": ["src/auth/legacy.py"], "commits": ["a1b2c3d", "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"],
			"pull_requests": ["#234", "https://github.com/acme/api/pull/234"], "issues": ["AUTH-12", "acme/api#77", "12"],
			"tests": ["tests/test_jwt.py"], "documentation": ["docs/auth.md", "https://example.com/auth"],
			"config_files": ["config/auth.yaml"], "logs": ["logs/auth-2026-01-02.log"],
			"external_refs": ["https://datatracker.ietf.org/doc/html/rfc7519"]}}`,
		"plan": `{"breadcrumbs": {"files": ["src/auth/jwt.py:45-89", "src/auth/jwt.py:7"], "commits": ["abc123f"],
			"decisions": ["use RS256 for service tokens"], "patterns": ["refresh-before-expiry"]}}`,
		"unknown kinds kept": `{"breadcrumbs": {"slack_threads": ["C024BE91L/1512085950.000216"], "tickets": ["any text at all"]}}`,
	}
	for name, md := range cases {
		t.Run(name, func(t *testing.T) {
			id := enginetest.MustNote(t, e, engine.NewNote{Agent: "ann", Content: "breadcrumbs " + name, Metadata: json.RawMessage(md)})
			m, err := e.GetMessage(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			var in, out struct {
				Breadcrumbs map[string][]string `json:"breadcrumbs"`
			}
			if err := json.Unmarshal([]byte(md), &in); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(m.Metadata, &out); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(in, out) || !m.HasBreadcrumbs {
				t.Fatalf("stored %s\nwant %v", m.Metadata, in)
			}
			// The typed view holds every kind too.
			b, err := json.Marshal(m.Breadcrumbs())
			if err != nil {
				t.Fatal(err)
			}
			var typed map[string][]string
			if err := json.Unmarshal(b, &typed); err != nil || !reflect.DeepEqual(typed, in.Breadcrumbs) {
				t.Fatalf("Breadcrumbs() = %s, want %v", b, in.Breadcrumbs)
			}
		})
	}
}

func TestSplitPathRef(t *testing.T) {
	for _, c := range []struct {
		ref      string
		path     string
		from, to int
		ok       bool
	}{
		{"a.go", "a.go", 0, 0, true},
		{"a.go:45-89", "a.go", 45, 89, true},
		{"a.go:7", "a.go", 7, 7, true},
		{`C:\src\a.go`, `C:\src\a.go`, 0, 0, true},
		{"pkg/x.go:TestX", "pkg/x.go:TestX", 0, 0, true},
		{"a.go:9-3", "a.go", 0, 0, false},
		{"a.go:0", "a.go", 0, 0, false},
	} {
		path, from, to, ok := engine.SplitPathRef(c.ref)
		if path != c.path || from != c.from || to != c.to || ok != c.ok {
			t.Errorf("SplitPathRef(%q) = %q %d %d %v, want %q %d %d %v", c.ref, path, from, to, ok, c.path, c.from, c.to, c.ok)
		}
	}
}
