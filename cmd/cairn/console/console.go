package console

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// AssetPrefix is where the console's files are served; / serves its page.
const AssetPrefix = "/console/"

//go:embed assets
var assets embed.FS

// securityHeaders are set on every answer of the console.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options": "nosniff",
	"X-Frame-Options":        "DENY",
	"Referrer-Policy":        "no-referrer",
	// The files are small and change with the binary: always revalidate.
	"Cache-Control": "no-cache",
}

// Handler serves the console: GET / is the page, GET /console/NAME its
// files; anything else under /console/ is 404.
func Handler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range securityHeaders {
			w.Header().Set(k, v)
		}
		switch {
		case r.URL.Path == "/":
			http.ServeFileFS(w, r, sub, "index.html")
		case strings.HasPrefix(r.URL.Path, AssetPrefix) && !strings.HasSuffix(r.URL.Path, "/"):
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/" + strings.TrimPrefix(r.URL.Path, AssetPrefix)
			files.ServeHTTP(w, r2)
		default:
			http.NotFound(w, r)
		}
	})
}
