package server

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/cairn-dev/cairn/cmd/cairn/cairnapi"
	"github.com/cairn-dev/cairn/cmd/cairn/console"
	"github.com/cairn-dev/cairn/cmd/cairn/httpguard"
	"github.com/cairn-dev/cairn/cmd/cairn/reqlog"
	"github.com/cairn-dev/cairn/engine"
)

// Options configure New.
type Options struct {
	// Engine reports the embedding queue and the embedding cache on
	// /metrics.
	Engine *engine.Engine
	// VectorStats reports the vector store of the process on /metrics;
	// false (or nil) when it holds none.
	VectorStats func() (VectorStats, bool)
	// Chroma serves /api/v2 and /api/v1 and checks the token itself.
	Chroma http.Handler
	// Cairn serves /api/cairn/v1.
	Cairn *cairnapi.Handler
	// AuthToken, when set, is required (Authorization: Bearer or
	// X-Chroma-Token) on cairn's API and /metrics.
	AuthToken string
	// LogRequests logs one line per request to Logger.
	LogRequests bool
	// Logger receives the request log; nil discards it.
	Logger *slog.Logger
	// Hosts lists the host names the server answers to besides IP
	// literals and localhost (the listen name and configured names); a
	// request naming another Host is refused (DNS rebinding).
	Hosts []string
	// AllowedOrigins lists the origins ("http://host:port") of other
	// sites whose pages may call the APIs; requests from any other origin
	// but the server's own are refused.
	AllowedOrigins []string
	// BodyBudget bounds the request body bytes buffered at once across
	// all requests (503 beyond it); 0 means no bound.
	BodyBudget int64
}

// New returns the handler of `cairn serve`.
func New(opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	g := newGuard(opts)
	m := newMetrics(opts.Engine, opts.VectorStats, opts.Cairn, opts.Chroma, g.budget)
	mux := http.NewServeMux()
	mux.Handle(cairnapi.Prefix+"/", requireToken(opts.AuthToken, opts.Cairn))
	mux.Handle("/metrics", requireToken(opts.AuthToken, m))
	// The console's files hold no data (the page asks the API, with the
	// token, for everything it shows), so they are served without it.
	ui := console.Handler()
	mux.Handle("GET /{$}", ui)
	mux.Handle("GET "+console.AssetPrefix, ui)
	mux.Handle("/", opts.Chroma)
	h := m.instrument(g.wrap(mux))
	if opts.LogRequests {
		h = logRequests(opts.Logger, h)
	}
	return h
}

// requireToken answers 401 unless the request carries token (as Bearer or
// X-Chroma-Token, parsed by httpguard as on the Chroma side), before any
// routing, so an unauthenticated caller learns nothing about routes. An
// empty token means no auth.
func requireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpguard.Authorized(r, token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cairn"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"unauthorized","message":"missing or wrong token: send Authorization: Bearer TOKEN or X-Chroma-Token: TOKEN"}` + "\n"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// logRequests logs one line per request: method, path, status, bytes,
// duration and the remote address.
func logRequests(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := reqlog.Wrap(w)
		next.ServeHTTP(sw, r)
		status := sw.Status()
		if status == 0 {
			status = http.StatusOK
		}
		logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", status), slog.Int64("bytes", sw.Bytes()),
			slog.Duration("duration", time.Since(start)), slog.String("remote", r.RemoteAddr))
	})
}
