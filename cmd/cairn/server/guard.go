package server

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"

	"github.com/cairn-dev/cairn/cmd/cairn/cairnapi"
	"github.com/cairn-dev/cairn/cmd/cairn/httpguard"
)

// guard holds the checks every request passes before it reaches an API:
// the Host header (against DNS rebinding), the Origin header (against
// cross-origin pages), a JSON Content-Type on bodies, and the server-wide
// budget of body bytes buffered at once.
type guard struct {
	hosts   map[string]bool // extra host names, lower case
	origins map[string]bool // allowed cross origins, lower case
	budget  *httpguard.Budget
}

func newGuard(opts Options) *guard {
	g := &guard{hosts: map[string]bool{}, origins: map[string]bool{}, budget: httpguard.NewBudget(opts.BodyBudget)}
	for _, h := range opts.Hosts {
		g.hosts[normHost(h)] = true
	}
	for _, o := range opts.AllowedOrigins {
		g.origins[strings.TrimSuffix(strings.ToLower(o), "/")] = true
	}
	return g
}

func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// hostAllowed reports whether the Host header names this server: any IP
// literal (an address cannot be rebound to another one by DNS), localhost
// and its subdomains (resolved to loopback by browsers), or a configured
// name (the --host name and server.hosts).
func (g *guard) hostAllowed(hostport string) bool {
	if hostport == "" {
		return true // HTTP/1.0 without Host: not a browser
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = normHost(host)
	if net.ParseIP(host) != nil || host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	return g.hosts[host]
}

// originAllowed reports whether a request's Origin may use the API, and
// whether it is a configured cross origin (which then gets CORS headers).
func (g *guard) originAllowed(r *http.Request) (ok, cross bool) {
	origin := strings.TrimSuffix(strings.ToLower(r.Header.Get("Origin")), "/")
	switch {
	case origin == "":
		return true, false // not sent by a browser for same-origin GETs or by non-browser clients
	case origin == "http://"+strings.ToLower(r.Host):
		return true, false
	case g.origins[origin]:
		return true, true
	}
	return false, false
}

// corsMethods and corsHeaders are what a configured origin may send.
const (
	corsMethods = "GET, HEAD, POST, PUT, PATCH, DELETE"
	corsHeaders = "Authorization, Content-Type, X-Chroma-Token"
)

// wrap applies the checks in order: Host, Origin (answering CORS preflights
// of configured origins), Content-Type, body budget.
func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.hostAllowed(r.Host) {
			refuse(w, r, http.StatusForbidden, "forbidden_host", "ChromaError",
				"Host "+quote(r.Host)+" is not a name this server answers to (DNS rebinding protection); add it to server.hosts in config.toml")
			return
		}
		ok, cross := g.originAllowed(r)
		if !ok {
			refuse(w, r, http.StatusForbidden, "forbidden_origin", "ChromaError",
				"cross-origin requests from "+quote(r.Header.Get("Origin"))+" are refused; allow an origin with server.allowed_origins in config.toml")
			return
		}
		if cross {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", corsMethods)
				h.Set("Access-Control-Allow-Headers", corsHeaders)
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if hasBody(r) && !httpguard.IsJSON(r.Header.Get("Content-Type")) {
			refuse(w, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "ChromaError",
				"Expected request with `Content-Type: application/json`")
			return
		}
		release, err := g.budget.Track(r)
		defer release()
		if err != nil {
			w.Header().Set("Retry-After", "1")
			refuse(w, r, http.StatusServiceUnavailable, "unavailable", "ChromaError", err.Error())
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hasBody reports whether r is a write that sends a body (a POST with an
// empty body, like Chroma's reset, needs no Content-Type).
func hasBody(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		return r.ContentLength != 0
	}
	return false
}

// quote is strconv.Quote bounded to a short prefix, for echoing headers.
func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// refuse answers a request the front refuses, in the error body of the
// API the path belongs to: cairn's {"error": code, "message"} or Chroma's
// {"error": name, "message"}.
func refuse(w http.ResponseWriter, r *http.Request, status int, code, chromaName, message string) {
	name := code
	if isChromaPath(r.URL.Path) {
		name = chromaName
	}
	b, _ := json.Marshal(struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}{name, message})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func isChromaPath(p string) bool {
	return strings.HasPrefix(p, "/api/") && !strings.HasPrefix(p, cairnapi.Prefix+"/") && p != cairnapi.Prefix
}
