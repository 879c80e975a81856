package reqlog

import "net/http"

// Recorder is an http.ResponseWriter that records the status and the size
// of the response written through it.
type Recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

// Wrap returns w itself when it is a *Recorder, else a Recorder around w.
func Wrap(w http.ResponseWriter) *Recorder {
	if r, ok := w.(*Recorder); ok {
		return r
	}
	return &Recorder{ResponseWriter: w}
}

// Status is the status code sent, 0 while nothing has been written.
func (r *Recorder) Status() int { return r.status }

// Bytes is the number of body bytes written.
func (r *Recorder) Bytes() int64 { return r.bytes }

// WriteHeader records the first status code and sends it.
func (r *Recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write records an implicit 200 and the bytes written.
func (r *Recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *Recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
