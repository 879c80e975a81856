package httpguard_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/httpguard"
)

// FuzzAuthorization: any header values parse without panicking; a parsed
// Bearer token is exactly what follows "bearer " and holds only visible
// ASCII; a request authorizes only when every token it carries is the
// configured one; and IsJSON never accepts a type outside application/.
func FuzzAuthorization(f *testing.F) {
	for _, s := range []string{"Bearer s3", "bearer  s3", "BEARER s3", "Bearer", "Basic s3", "Bearer s3 ", "Bearer \x00", "Bearer é"} {
		f.Add(s, "s3", "application/json; charset=utf-8")
	}
	f.Add("", "", "text/plain")
	f.Fuzz(func(t *testing.T, header, chromaToken, contentType string) {
		tok, ok := httpguard.BearerToken(header)
		if ok {
			if !strings.EqualFold(header[:7], "bearer ") || header[7:] != tok || tok == "" {
				t.Fatalf("BearerToken(%q) = %q", header, tok)
			}
			for i := 0; i < len(tok); i++ {
				if tok[i] <= ' ' || tok[i] >= 0x7f {
					t.Fatalf("BearerToken(%q) kept byte %#x", header, tok[i])
				}
			}
		}
		r, err := http.NewRequest("GET", "http://127.0.0.1/", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Authorization", header)
		r.Header.Set("X-Chroma-Token", chromaToken)
		const token = "s3"
		if httpguard.Authorized(r, token) && (!ok || tok != token || chromaToken != token) {
			t.Fatalf("authorized with Authorization %q and X-Chroma-Token %q", header, chromaToken)
		}
		if httpguard.IsJSON(contentType) && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "application/") {
			t.Fatalf("IsJSON(%q) = true", contentType)
		}
	})
}
