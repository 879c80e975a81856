package chromaapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cairn-dev/cairn/cmd/cairn/httpguard"
	"github.com/cairn-dev/cairn/cmd/cairn/reqlog"
	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// Version is the Chroma server version this adapter answers as.
const Version = "1.0.0"

// Defaults for the limits in Options.
const (
	DefaultMaxBodyBytes      = 256 << 20
	DefaultMaxBatchSize      = 100_000
	DefaultMaxNResults       = 100_000
	DefaultMaxRequestResults = 100_000
	DefaultMaxAnswerBytes    = 64 << 20
	DefaultMaxIDs            = 100_000
	DefaultMaxFilterClauses  = 500
	DefaultMaxFilterValues   = 100_000
)

// Options configures the handler. The zero value of every field but
// Collections means the default.
type Options struct {
	// Collections is the collection store the API serves (required): in
	// cairn serve the engine's own store, so
	// that one process holds one Store per directory, or the PostgreSQL
	// collections of a PostgreSQL-backed server.
	Collections chroma.Store
	// AuthToken, when not empty, is required on every request except
	// heartbeat and version, as "Authorization: Bearer <token>" or
	// "X-Chroma-Token: <token>". When empty, those headers are ignored (as
	// Chroma does without an auth provider).
	AuthToken string
	// AllowReset enables POST /api/v2/reset (Chroma's allow_reset). The
	// collection store must have been opened with AllowReset too (and keep
	// the ReadOnly databases on reset).
	AllowReset bool
	// ReadOnly lists databases served for reading only (see
	// ReadOnlyDatabase): cairn serve's engine vectors.
	ReadOnly []ReadOnlyDatabase
	// ReadOnlyStore, when not empty, makes the whole store read-only and
	// says why (cairn serve on a data dir it may not write): every change
	// (tenant, database, collection, records, reset) is refused with 403
	// ChromaError and this text; reads, and get_or_create of a collection
	// that exists, work.
	ReadOnlyStore string
	// MaxBodyBytes limits a request body (default 256 MiB): 413.
	MaxBodyBytes int64
	// MaxBatchSize limits the records in one add/upsert/update and the query
	// embeddings in one query (default 100,000; Chroma reports 5461 to its
	// clients and enforces nothing): 400.
	MaxBatchSize int
	// MaxNResults limits n_results (default 100,000): 400.
	MaxNResults int
	// MaxFilterDepth limits the nesting of where/where_document clauses
	// ($and/$or levels). 0 means only the JSON nesting limit of 128 that
	// Chroma has too.
	MaxFilterDepth int
	// MaxRequestResults bounds the records one request may answer: query
	// embeddings x n_results for a query, the records of a get (default
	// 100,000): 400 naming the limit, so no single request makes the
	// server build an unbounded answer.
	MaxRequestResults int
	// MaxAnswerBytes bounds the bytes of one get or query answer (default
	// 64 MiB, the default max_body_bytes: what a client may write in one
	// request it may read back in one): the ids, documents, uris and
	// metadata it carries, and 16 bytes per embedding number and distance.
	// The store stops copying records once its result is over it
	// (chroma.AnswerBudget), and the JSON is never built: a 400 naming
	// the limit. MaxRequestResults counts records, and one 8 MB document
	// asked for by 100 query embeddings is an 800 MB answer.
	MaxAnswerBytes int64
	// MaxScanBytes bounds the work of one request's where_document filter:
	// the document bytes its clauses scan in all, each clause evaluated
	// counting its document's length (default chroma.DefaultMaxScanBytes,
	// 256 MiB): 400 naming the limit.
	MaxScanBytes int64
	// MaxIDs bounds the ids of one get, query or delete (default 100,000).
	MaxIDs int
	// MaxFilterClauses bounds the clauses of a where and of a
	// where_document filter, $and/$or included (default 500); a
	// where_document scan costs clauses x documents.
	MaxFilterClauses int
	// MaxFilterValues bounds the $in/$nin values of a where filter
	// (default 100,000).
	MaxFilterValues int
	// Logger receives one structured line per request (nil: discard).
	Logger *slog.Logger
	// Now returns the current time for heartbeat (nil: time.Now).
	Now func() time.Time
}

// Handler serves the Chroma HTTP API v2 under /api/v2 (and answers /api/v1
// the way Chroma 1.0.0 does). It is safe for concurrent use.
type Handler struct {
	opts  Options
	coll  chroma.Store
	stats map[string]*routeStats // by route name; the map is fixed at New
}

// routeStats counts the requests of one route.
type routeStats struct {
	count, clientErrors, serverErrors, nanos atomic.Uint64
}

// RouteStats reports the requests a route has answered since New.
type RouteStats struct {
	Route        string        // route name, e.g. "query", "add", "unknown"
	Requests     uint64        // all answers
	ClientErrors uint64        // 4xx answers
	ServerErrors uint64        // 5xx answers
	Total        time.Duration // summed handling time
}

// Stats returns per-route request counters (for /metrics), sorted by route.
func (h *Handler) Stats() []RouteStats {
	out := make([]RouteStats, 0, len(h.stats))
	for name, st := range h.stats {
		out = append(out, RouteStats{Route: name, Requests: st.count.Load(), ClientErrors: st.clientErrors.Load(),
			ServerErrors: st.serverErrors.Load(), Total: time.Duration(st.nanos.Load())})
	}
	slices.SortFunc(out, func(a, b RouteStats) int { return strings.Compare(a.Route, b.Route) })
	return out
}

// New returns the Chroma API handler. It panics if opts.Collections is nil,
// which is a programming error.
func New(opts Options) *Handler {
	if opts.Collections == nil {
		panic("chromaapi: Options.Collections is nil")
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxBatchSize <= 0 {
		opts.MaxBatchSize = DefaultMaxBatchSize
	}
	if opts.MaxNResults <= 0 {
		opts.MaxNResults = DefaultMaxNResults
	}
	if opts.MaxRequestResults <= 0 {
		opts.MaxRequestResults = DefaultMaxRequestResults
	}
	if opts.MaxAnswerBytes <= 0 {
		opts.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	if opts.MaxIDs <= 0 {
		opts.MaxIDs = DefaultMaxIDs
	}
	if opts.MaxFilterClauses <= 0 {
		opts.MaxFilterClauses = DefaultMaxFilterClauses
	}
	if opts.MaxFilterValues <= 0 {
		opts.MaxFilterValues = DefaultMaxFilterValues
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	h := &Handler{opts: opts, coll: opts.Collections, stats: map[string]*routeStats{}}
	if len(opts.ReadOnly) > 0 || opts.ReadOnlyStore != "" {
		h.coll = readOnly{Store: opts.Collections, dbs: slices.Clone(opts.ReadOnly), store: opts.ReadOnlyStore}
	}
	for _, name := range append(routeNames(), "unknown", "v1") {
		h.stats[name] = &routeStats{}
	}
	return h
}

// traceID is the chroma-trace-id header Chroma 1.0.0 puts on error answers
// (all zeros without tracing).
const traceID = "00000000000000000000000000000000"

func writeError(w http.ResponseWriter, e *apiError) {
	h := w.Header()
	h.Set("chroma-trace-id", traceID)
	if e.allow != "" {
		h.Set("Allow", e.allow)
	}
	if e.name == "" {
		w.WriteHeader(e.status)
		return
	}
	b := make([]byte, 0, 64+len(e.message))
	b = append(b, `{"error":`...)
	b = appendString(b, e.name)
	b = append(b, `,"message":`...)
	b = appendString(b, e.message)
	b = append(b, '}')
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(e.status)
	_, _ = w.Write(b)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// request carries what a route handler needs.
type request struct {
	r    *http.Request
	ctx  context.Context
	segs []string // path segments after /api/v2
}

// body reads and syntax-checks the request body.
func (h *Handler) body(rq *request) (any, *apiError) {
	if !httpguard.IsJSON(rq.r.Header.Get("Content-Type")) {
		return nil, &apiError{status: 415, name: "ChromaError",
			message: "Expected request with `Content-Type: application/json`"}
	}
	rd := http.MaxBytesReader(nil, rq.r.Body, h.opts.MaxBodyBytes)
	var data []byte
	var err error
	if n := rq.r.ContentLength; n > 0 && n <= h.opts.MaxBodyBytes {
		// One allocation of the announced size instead of repeated growth.
		data = make([]byte, n)
		_, err = io.ReadFull(rd, data)
	} else {
		data, err = io.ReadAll(rd)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.Is(err, httpguard.ErrBodyBudget) {
			return nil, &apiError{status: 503, name: nameChroma, message: "Server busy: request bodies in flight exceed its buffer budget; retry"}
		}
		if errors.As(err, &mbe) {
			return nil, &apiError{status: 413, name: "ChromaError",
				message: fmt.Sprintf("Request body exceeds the limit of %d bytes", h.opts.MaxBodyBytes)}
		}
		return nil, errInvalid("Failed to read the request body: %v", err)
	}
	return parseBody(data)
}

// ServeHTTP routes a request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := reqlog.Wrap(w)
	route := "unknown"
	defer func() {
		// A bug must not take the connection down without an answer: log it
		// and answer 500 as Chroma does for internal errors.
		if p := recover(); p != nil {
			h.opts.Logger.LogAttrs(r.Context(), slog.LevelError, "chroma handler panic",
				slog.String("route", route), slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
			if sw.Status() == 0 {
				writeError(sw, &apiError{status: 500, name: "InternalError", message: fmt.Sprintf("internal error: %v", p)})
			}
		}
	}()
	route = h.serve(sw, r)
	took := time.Since(start)
	if st := h.stats[route]; st != nil {
		st.count.Add(1)
		st.nanos.Add(uint64(took))
		switch {
		case sw.Status() >= 500:
			st.serverErrors.Add(1)
		case sw.Status() >= 400:
			st.clientErrors.Add(1)
		}
	}
	h.opts.Logger.LogAttrs(r.Context(), slog.LevelInfo, "chroma request",
		slog.String("method", r.Method), slog.String("route", route),
		slog.Int("status", sw.Status()), slog.Duration("took", took))
}

// route describes one path pattern: the methods it allows and its handler.
type route struct {
	name    string
	pattern string // the path with placeholders, a bounded metrics label
	methods map[string]func(*Handler, *request) ([]byte, int, *apiError)
	allow   string
}

// serve answers r and returns the route name (for logs and metrics).
func (h *Handler) serve(w http.ResponseWriter, r *http.Request) string {
	segs, ok := splitPath(r.URL.EscapedPath())
	// Authenticate before routing: an unauthenticated caller learns
	// nothing about which routes or methods exist.
	if !public(segs) && !httpguard.Authorized(r, h.opts.AuthToken) {
		writeError(w, &apiError{status: 401, name: "AuthError", message: "Unauthorized"})
		return "unknown"
	}
	if !ok {
		writeError(w, errNotFoundRoute)
		return "unknown"
	}
	if len(segs) >= 3 && segs[0] == "api" && segs[1] == "v1" {
		if r.Method == http.MethodPost {
			writeError(w, &apiError{status: 405, allow: "GET,HEAD,PUT,PATCH,DELETE,OPTIONS"})
		} else {
			writeError(w, &apiError{status: 410, name: "Unimplemented",
				message: "The v1 API is deprecated. Please use /v2 apis"})
		}
		return "v1"
	}
	if len(segs) < 2 || segs[0] != "api" || segs[1] != "v2" {
		writeError(w, errNotFoundRoute)
		return "unknown"
	}
	rt, params := match(segs[2:])
	if rt == nil {
		writeError(w, errNotFoundRoute)
		return "unknown"
	}
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	fn := rt.methods[method]
	if fn == nil {
		writeError(w, &apiError{status: 405, allow: rt.allow})
		return rt.name
	}
	body, status, aerr := fn(h, &request{r: r, ctx: r.Context(), segs: params})
	if aerr != nil {
		writeError(w, aerr)
		return rt.name
	}
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		return rt.name
	}
	writeJSON(w, status, body)
	return rt.name
}

// public reports whether segs (the whole path) is a route Chroma answers
// without a token: heartbeat and version.
func public(segs []string) bool {
	if len(segs) < 2 || segs[0] != "api" || segs[1] != "v2" {
		return false
	}
	rest := segs[2:]
	return len(rest) == 0 || (len(rest) == 1 && (rest[0] == "heartbeat" || rest[0] == "version"))
}

// Pattern returns the pattern of the route r matches, the path with
// placeholders for tenant, database and collection ("" for none), so that
// metrics labels form a bounded set whatever the path holds.
func (h *Handler) Pattern(r *http.Request) string {
	segs, ok := splitPath(r.URL.EscapedPath())
	if !ok || len(segs) < 2 || segs[0] != "api" || segs[1] != "v2" {
		return ""
	}
	if rt, _ := match(segs[2:]); rt != nil {
		return rt.pattern
	}
	return ""
}

// splitPath splits an escaped path into unescaped segments. A trailing
// slash or an empty segment makes the path unknown (Chroma: 404).
func splitPath(p string) ([]string, bool) {
	if !strings.HasPrefix(p, "/") {
		return nil, false
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		if s == "" {
			return nil, false
		}
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, false
		}
		parts[i] = u
	}
	return parts, true
}
