package httpguard

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"
)

// Authorized reports whether r carries token (see the package comment for
// the accepted forms). An empty token authorizes every request.
func Authorized(r *http.Request, token string) bool {
	if token == "" {
		return true
	}
	vals := r.Header.Values("X-Chroma-Token")
	auth := r.Header.Values("Authorization")
	if len(vals)+len(auth) == 0 || len(vals) > 1 || len(auth) > 1 {
		return false
	}
	ok := true
	if len(vals) == 1 {
		ok = equal(vals[0], token)
	}
	if len(auth) == 1 {
		got, parsed := BearerToken(auth[0])
		ok = ok && parsed && equal(got, token)
	}
	return ok
}

// BearerToken parses an Authorization header value of the Bearer scheme:
// the scheme in any case, exactly one space, then a token of visible
// ASCII characters.
func BearerToken(v string) (string, bool) {
	const scheme = "bearer "
	if len(v) <= len(scheme) || !strings.EqualFold(v[:len(scheme)], scheme) {
		return "", false
	}
	tok := v[len(scheme):]
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c <= ' ' || c >= 0x7f {
			return "", false
		}
	}
	return tok, true
}

func equal(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// IsJSON reports whether a Content-Type value declares JSON:
// application/json or application/*+json, with parameters (charset)
// allowed. Neither is a type a browser may send cross-origin without a
// CORS preflight, which is why bodies of any other type are refused.
func IsJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	typ, sub, ok := strings.Cut(mt, "/")
	return ok && typ == "application" && (sub == "json" || strings.HasSuffix(sub, "+json"))
}

// ErrBodyBudget is returned by a body read that would take the server's
// body bytes buffered at once over its budget. The request should be
// answered 503 (retry later), not 4xx: the request itself is fine.
var ErrBodyBudget = errors.New("httpguard: server busy: request bodies in flight exceed the server's buffer budget")

// Budget bounds the request body bytes read (and so buffered) at once
// across concurrent requests.
type Budget struct {
	limit int64
	used  atomic.Int64
}

// NewBudget returns a budget of limit bytes; limit <= 0 means no bound.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// InUse returns the bytes currently reserved.
func (b *Budget) InUse() int64 { return b.used.Load() }

// Limit returns the budget in bytes (0: no bound).
func (b *Budget) Limit() int64 { return b.limit }

// reserve takes n bytes from the budget or reports that it cannot.
func (b *Budget) reserve(n int64) bool {
	if b.limit <= 0 {
		return true
	}
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

// Track makes r's body count against the budget: a body of announced
// length reserves it up front (an error if it does not fit), a chunked
// body reserves as it is read (a read fails with ErrBodyBudget when it
// does not fit). The returned release gives everything back; call it when
// the request is answered, since the handler may hold the bytes until then.
func (b *Budget) Track(r *http.Request) (release func(), err error) {
	if b.limit <= 0 || r.Body == nil || r.Body == http.NoBody {
		return func() {}, nil
	}
	br := &budgetReader{rc: r.Body, b: b}
	if n := r.ContentLength; n > 0 {
		if !b.reserve(n) {
			return func() {}, fmt.Errorf("%w (a body of %d bytes does not fit in %d)", ErrBodyBudget, n, b.limit)
		}
		br.held = n
	}
	r.Body = br
	return func() { b.used.Add(-br.held) }, nil
}

// budgetReader reserves body bytes as they are read beyond what was
// reserved up front.
type budgetReader struct {
	rc   io.ReadCloser
	b    *Budget
	held int64 // bytes reserved
	read int64
}

func (br *budgetReader) Read(p []byte) (int, error) {
	n, err := br.rc.Read(p)
	br.read += int64(n)
	if extra := br.read - br.held; extra > 0 {
		if !br.b.reserve(extra) {
			return n, ErrBodyBudget
		}
		br.held += extra
	}
	return n, err
}

func (br *budgetReader) Close() error { return br.rc.Close() }
