package reqlog_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/reqlog"
)

// TestRecorder: the first status wins, a body alone means 200, bytes add
// up, and wrapping twice gives the same Recorder.
func TestRecorder(t *testing.T) {
	rec := httptest.NewRecorder()
	r := reqlog.Wrap(rec)
	if reqlog.Wrap(r) != r {
		t.Error("Wrap of a Recorder made a new one")
	}
	if r.Status() != 0 {
		t.Errorf("status before writing = %d, want 0", r.Status())
	}
	r.WriteHeader(http.StatusTeapot)
	r.WriteHeader(http.StatusOK)
	_, _ = r.Write([]byte("abc"))
	_, _ = r.Write([]byte("de"))
	if r.Status() != http.StatusTeapot || r.Bytes() != 5 || rec.Code != http.StatusTeapot {
		t.Errorf("status %d bytes %d (sent %d), want 418, 5", r.Status(), r.Bytes(), rec.Code)
	}
	w := reqlog.Wrap(httptest.NewRecorder())
	_, _ = w.Write([]byte("x"))
	if w.Status() != http.StatusOK {
		t.Errorf("status after a body alone = %d, want 200", w.Status())
	}
}
