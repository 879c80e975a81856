package cairnapi

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/cmd/cairn/httpguard"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
)

// Prefix is where the API lives.
const Prefix = "/api/cairn/v1"

// Defaults of Options.
const (
	DefaultMaxBodyBytes = 4 << 20
	DefaultMaxLimit     = 1000
	DefaultMaxDepth     = 32
	// DefaultMaxResultBytes is Options.MaxResultBytes' default (config
	// server.max_result_bytes).
	DefaultMaxResultBytes = 16 << 20
)

//go:embed openapi.json
var openAPI []byte

// Options configure the API handler. Engine is required.
type Options struct {
	Engine *engine.Engine
	// MaxBodyBytes limits a request body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxLimit limits the limit parameters of listings; 0 means
	// DefaultMaxLimit. Search's limit has the bound every surface shares
	// (searchwire.MaxLimit).
	MaxLimit int
	// MaxDepth limits the JSON nesting of a body (metadata, where); 0
	// means DefaultMaxDepth.
	MaxDepth int
	// MaxResultBytes bounds the JSON of a search's results and of a
	// listing (0: DefaultMaxResultBytes): the items past it are left out
	// whole, and the answer says "truncated": true with
	// "max_result_bytes".
	MaxResultBytes int64
	// GC holds the retention policies POST /gc applies (Progress is
	// ignored); its MaxBytes is the storage budget GET /stats reports.
	GC ops.GCOptions
	// ReadOnly, when not empty, says why the API only reads (cairn serve
	// on a data dir it may not write): every route that writes answers 403
	// read_only with this text before it reaches the engine.
	ReadOnly string
	// Logger receives operational errors; nil discards them.
	Logger *slog.Logger
}

// Handler serves cairn's own API. It is safe for concurrent use.
type Handler struct {
	opts Options
	mux  *http.ServeMux
}

// Routes lists the API's routes as "METHOD PATH" (for the OpenAPI test and
// the metrics).
func Routes() []string {
	return []string{
		"POST " + Prefix + "/messages",
		"GET " + Prefix + "/messages/{id}",
		"DELETE " + Prefix + "/messages/{id}",
		"GET " + Prefix + "/messages/{id}/neighbours",
		"POST " + Prefix + "/notes",
		"POST " + Prefix + "/search",
		"GET " + Prefix + "/agents",
		"GET " + Prefix + "/agents/{agent}/notes",
		"GET " + Prefix + "/agents/{agent}/unread",
		"POST " + Prefix + "/agents/{agent}/read",
		"GET " + Prefix + "/channels",
		"POST " + Prefix + "/channels",
		"GET " + Prefix + "/channels/{channel}/messages",
		"GET " + Prefix + "/stats",
		"GET " + Prefix + "/stats/timeline",
		"POST " + Prefix + "/gc",
		"GET " + Prefix + "/openapi.json",
	}
}

// New returns the handler.
func New(opts Options) (*Handler, error) {
	if opts.Engine == nil {
		return nil, errors.New("cairnapi: Options.Engine is required")
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxLimit <= 0 {
		opts.MaxLimit = DefaultMaxLimit
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{opts: opts, mux: http.NewServeMux()}
	// Each route says whether it writes: a read-only API refuses those.
	const reads, writes = false, true
	for _, r := range []struct {
		route  string
		f      func(*http.Request) (any, int, error)
		writes bool
	}{
		{"POST " + Prefix + "/messages", h.storeMessage, writes},
		{"GET " + Prefix + "/messages/{id}", h.getMessage, reads},
		{"DELETE " + Prefix + "/messages/{id}", h.deleteMessage, writes},
		{"GET " + Prefix + "/messages/{id}/neighbours", h.neighbours, reads},
		{"POST " + Prefix + "/notes", h.writeNote, writes},
		{"POST " + Prefix + "/search", h.search, reads},
		{"GET " + Prefix + "/agents", h.agents, reads},
		{"GET " + Prefix + "/agents/{agent}/notes", h.notes, reads},
		{"GET " + Prefix + "/agents/{agent}/unread", h.unread, reads},
		{"POST " + Prefix + "/agents/{agent}/read", h.markRead, writes},
		{"GET " + Prefix + "/channels", h.channels, reads},
		{"POST " + Prefix + "/channels", h.createChannel, writes},
		{"GET " + Prefix + "/channels/{channel}/messages", h.channelMessages, reads},
		{"GET " + Prefix + "/stats", h.stats, reads},
		{"GET " + Prefix + "/stats/timeline", h.timeline, reads},
		{"POST " + Prefix + "/gc", h.gc, writes},
	} {
		f := r.f
		if r.writes && opts.ReadOnly != "" {
			f = func(*http.Request) (any, int, error) { return nil, 0, errReadOnly{opts.ReadOnly} }
		}
		h.mux.Handle(r.route, h.wrap(f))
	}
	h.mux.HandleFunc("GET "+Prefix+"/openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openAPI)
	})
	h.mux.HandleFunc(Prefix+"/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, apiError{Error: "not_found", Message: fmt.Sprintf("no route %s %s; see %s/openapi.json", r.Method, r.URL.Path, Prefix)})
	})
	return h, nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// apiError is every error body.
type apiError struct {
	// Error is the class: invalid_argument, not_found, already_exists,
	// no_model, embedder_mismatch, dimension_mismatch, conflict, payload_too_large,
	// unsupported_media_type, unavailable, corrupt, incompatible_format,
	// read_only, internal.
	Error   string `json:"error"`
	Message string `json:"message"`
	// Field names the offending input field for invalid_argument.
	Field string `json:"field,omitempty"`
}

// invalidf is a 400 naming field.
func invalidf(field, format string, args ...any) error {
	return &engine.InvalidError{Field: field, Rule: fmt.Sprintf(format, args...)}
}

// errReadOnly refuses a write of a read-only API (Options.ReadOnly): 403,
// not 503, since waiting does not help (the process cannot write the data
// dir until it is restarted with write access) and clients retry a 503.
type errReadOnly struct{ why string }

func (e errReadOnly) Error() string { return e.why + "; nothing was written" }

// errTooLarge marks a body over MaxBodyBytes; errMediaType a body that is
// not JSON.
var (
	errTooLarge  = errors.New("request body too large")
	errMediaType = errors.New("unsupported media type")
)

// errorStatuses is this surface's one mapping of the engine's error
// classes (engine.ErrorClasses) to HTTP statuses and error body classes,
// most specific first. *engine.InvalidError (400 invalid_argument, with
// its field) and the adapter's own errors come before it in statusOf.
func errorStatuses() []struct {
	class  error
	status int
	code   string
} {
	return []struct {
		class  error
		status int
		code   string
	}{
		{engine.ErrNotFound, http.StatusNotFound, "not_found"},
		{engine.ErrExists, http.StatusConflict, "already_exists"},
		{engine.ErrNoModel, http.StatusConflict, "no_model"},
		{engine.ErrEmbedderMismatch, http.StatusConflict, "embedder_mismatch"},
		{engine.ErrDimensionMismatch, http.StatusConflict, "dimension_mismatch"},
		{engine.ErrClosed, http.StatusServiceUnavailable, "unavailable"},
		{context.Canceled, http.StatusServiceUnavailable, "unavailable"},
		{context.DeadlineExceeded, http.StatusServiceUnavailable, "unavailable"},
		{engine.ErrCorrupt, http.StatusInternalServerError, "corrupt"},
		{engine.ErrIncompatibleFormat, http.StatusInternalServerError, "incompatible_format"},
		{engine.ErrDiskFull, http.StatusInsufficientStorage, "disk_full"},
	}
}

// statusOf maps an error to its HTTP status and body. The message is the
// error's own text.
func statusOf(err error) (int, apiError) {
	var inv *engine.InvalidError
	var mbe *http.MaxBytesError
	var ro errReadOnly
	switch {
	case errors.As(err, &ro):
		return http.StatusForbidden, apiError{Error: "read_only", Message: ro.Error()}
	case errors.As(err, &inv):
		return http.StatusBadRequest, apiError{Error: "invalid_argument", Message: inv.Error(), Field: inv.Field}
	case errors.As(err, &mbe), errors.Is(err, errTooLarge):
		return http.StatusRequestEntityTooLarge, apiError{Error: "payload_too_large", Message: err.Error()}
	case errors.Is(err, errConflict):
		return http.StatusConflict, apiError{Error: "conflict", Message: err.Error()}
	case errors.Is(err, errMediaType):
		return http.StatusUnsupportedMediaType, apiError{Error: "unsupported_media_type", Message: err.Error()}
	case errors.Is(err, httpguard.ErrBodyBudget):
		return http.StatusServiceUnavailable, apiError{Error: "unavailable", Message: err.Error()}
	}
	for _, c := range errorStatuses() {
		if errors.Is(err, c.class) {
			msg := err.Error()
			if c.class == engine.ErrDiskFull {
				// The class's own text: the cause may be a file system
				// error naming an absolute path.
				msg = engine.ErrDiskFull.Error() + "; nothing was written"
			}
			return c.status, apiError{Error: c.code, Message: msg}
		}
	}
	return http.StatusInternalServerError, apiError{Error: "internal", Message: err.Error()}
}

func writeError(w http.ResponseWriter, status int, body apiError) {
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		fmt.Fprintf(&buf, `{"error":"internal","message":%q}`+"\n", err.Error())
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// wrap runs f and writes its result or error. A panic in f becomes a 500
// with a JSON body (and a log line), never a dropped connection.
func (h *Handler) wrap(f func(*http.Request) (any, int, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				h.opts.Logger.Error("panic in handler", "path", r.URL.Path, "panic", p)
				writeError(w, http.StatusInternalServerError, apiError{Error: "internal", Message: "internal error"})
			}
		}()
		v, status, err := f(r)
		if err != nil {
			st, body := statusOf(err)
			if st >= 500 {
				h.opts.Logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			}
			writeError(w, st, body)
			return
		}
		writeJSON(w, status, v)
	})
}

// decode reads r's JSON body into v: the body must be declared JSON
// (Content-Type application/json, see httpguard.IsJSON), within MaxBodyBytes, valid UTF-8, nested at most MaxDepth
// deep, one value, with no unknown fields.
func (h *Handler) decode(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); !httpguard.IsJSON(ct) {
		return fmt.Errorf("%w: Content-Type must be application/json, got %q (with curl: -H 'Content-Type: application/json')", errMediaType, ct)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, h.opts.MaxBodyBytes+1))
	if errors.Is(err, httpguard.ErrBodyBudget) {
		return err
	}
	if err != nil {
		return invalidf("body", "could not be read: %v", err)
	}
	if int64(len(body)) > h.opts.MaxBodyBytes {
		return fmt.Errorf("%w: the limit is %d bytes", errTooLarge, h.opts.MaxBodyBytes)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return invalidf("body", "must be a JSON object, got an empty body")
	}
	if !utf8.Valid(body) {
		return invalidf("body", "must be valid UTF-8")
	}
	if d := jsonDepth(body); d > h.opts.MaxDepth {
		return invalidf("body", "must be nested at most %d levels deep, got %d", h.opts.MaxDepth, d)
	}
	if field, key, ok := duplicateKey(body); ok {
		return invalidf(field, "key %q is given twice in one object", key)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return invalidf("body", "must hold one JSON value, found more after it")
	}
	return nil
}

// jsonError turns a decoding error into an InvalidError naming the field.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "body"
		}
		return invalidf(field, "must be %s, got JSON %s", jsonKind(te.Type.Kind().String()), te.Value)
	case errors.As(err, &se):
		return invalidf("body", "is not valid JSON: %v (at byte %d)", se, se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalidf("body", "is not valid JSON: unexpected end")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return invalidf(strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`), "is not a known field")
	}
	return invalidf("body", "%v", err)
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "int64", "int", "int32", "uint32", "uint64":
		return "an integer"
	case "float64", "float32":
		return "a number"
	case "bool":
		return "true or false"
	case "slice":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	}
	return "of another type"
}

// duplicateKey returns a key given twice in one object of b (decoding
// keeps the last silently) and the field it is in: the top-level field
// holding that object, or "body" for the body's own keys. Malformed JSON
// is left to the decoder.
func duplicateKey(b []byte) (field, key string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var objects []map[string]bool // nil entries are arrays
	inObject := func() bool { return len(objects) > 0 && objects[len(objects)-1] != nil }
	expectKey, top := false, ""
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", "", false
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				objects = append(objects, map[string]bool{})
				expectKey = true
				continue
			case '[':
				objects = append(objects, nil)
			default:
				objects = objects[:len(objects)-1]
			}
		case string:
			if inObject() && expectKey {
				if objects[len(objects)-1][t] {
					if len(objects) == 1 {
						return "body", t, true
					}
					return top, t, true
				}
				objects[len(objects)-1][t] = true
				if len(objects) == 1 {
					top = t
				}
				expectKey = false
				continue
			}
		}
		expectKey = inObject() // after a value inside an object comes a key
	}
}

// jsonDepth is the deepest nesting of arrays and objects in b (outside
// strings).
func jsonDepth(b []byte) int {
	depth, maxDepth := 0, 0
	inStr, esc := false, false
	for _, c := range b {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
			maxDepth = max(maxDepth, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return maxDepth
}

// queryInt reads an integer query parameter in [lo, hi]; def when absent.
func queryInt(r *http.Request, name string, def, lo, hi int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, invalidf(name, "must be an integer from %d to %d, got %q", lo, hi, s)
	}
	return n, nil
}

// queryHours reads a non-negative number of hours as a duration.
func queryHours(r *http.Request, name string) (time.Duration, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > engine.MaxHours {
		return 0, invalidf(name, "must be a number of hours from 0 to %.0f, got %q", float64(engine.MaxHours), s)
	}
	return time.Duration(f * float64(time.Hour)), nil
}

// Pattern returns the route pattern r matches ("" for none), for metrics.
func (h *Handler) Pattern(r *http.Request) string {
	_, p := h.mux.Handler(r)
	if p == Prefix+"/" {
		return ""
	}
	return p
}
