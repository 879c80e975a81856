package console_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/console"
)

func get(t *testing.T, srv *httptest.Server, path string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestServesPageAndFiles: / is the page, every file it names is served
// with its type, and every answer forbids framing and foreign sources.
func TestServesPageAndFiles(t *testing.T) {
	srv := httptest.NewServer(console.Handler())
	defer srv.Close()
	resp, page := get(t, srv, "/")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(page, "<title>cairn console</title>") {
		t.Fatalf("GET / = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	refs := regexp.MustCompile(`(?:src|href)="(/console/[^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 2 {
		t.Fatalf("the page names %d files", len(refs))
	}
	want := map[string]string{".js": "text/javascript", ".css": "text/css"}
	for _, r := range append(refs, []string{"", "/console/api.js"}, []string{"", "/console/chart.js"}) {
		resp, _ := get(t, srv, r[1])
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), want[filepath.Ext(r[1])]) {
			t.Errorf("GET %s = %d %s", r[1], resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	for _, path := range []string{"/", "/console/app.js", "/console/nope.js", "/console/"} {
		resp, _ := get(t, srv, path)
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: CSP %q, X-Frame-Options %q", path, csp, resp.Header.Get("X-Frame-Options"))
		}
	}
	for _, path := range []string{"/console/nope.js", "/console/", "/elsewhere"} {
		if resp, _ := get(t, srv, path); resp.StatusCode != 404 {
			t.Errorf("GET %s = %d, want 404", path, resp.StatusCode)
		}
	}
}

// TestAssetsAreSelfContained: nothing in the console loads from another
// origin (it works air-gapped) or needs what its Content-Security-Policy
// forbids (inline scripts, style attributes, eval, innerHTML).
func TestAssetsAreSelfContained(t *testing.T) {
	foreign := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|@import|url\(`)
	inline := regexp.MustCompile(`(?i)<script>|<script [^>]*>[^<]|\sstyle="|\son[a-z]+="|\beval\(|new Function|innerHTML|outerHTML|insertAdjacentHTML|document\.write`)
	err := fs.WalkDir(os.DirFS("assets"), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join("assets", path))
		if err != nil {
			return err
		}
		text := strings.ReplaceAll(string(b), "http://www.w3.org/2000/svg", "") // a namespace name, not a fetch
		if m := foreign.FindString(text); m != "" {
			t.Errorf("%s refers to another origin: %q", path, m)
		}
		if m := inline.FindString(text); m != "" {
			t.Errorf("%s uses %q, which the Content-Security-Policy forbids or which parses data as HTML", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
