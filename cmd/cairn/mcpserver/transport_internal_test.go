package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

type bufCloser struct{ bytes.Buffer }

func (*bufCloser) Close() error { return nil }

// FuzzStdioLine: every line is either handed to the server as a message
// or answered with exactly one JSON-RPC error line, never both, and never
// a panic.
func FuzzStdioLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `[]`, `{"id":{"a":1}}`, `not json`, `{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","method":7}`, "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\"}", `{"jsonrpc":"2.0","id":1e999,"method":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		out := &bufCloser{}
		c := &stdioConn{r: io.NopCloser(bytes.NewReader(nil)), w: out}
		_, ok := c.message(line)
		answers := bytes.Count(out.Bytes(), []byte("\n"))
		switch {
		case len(bytes.TrimSpace(line)) == 0:
			if ok || answers != 0 {
				t.Fatalf("blank line: ok %v, %d answers", ok, answers)
			}
		case ok && answers != 0, !ok && answers != 1:
			t.Fatalf("%q: ok %v, %d answers: %s", line, ok, answers, out.Bytes())
		case !ok:
			var resp struct {
				Version string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct{ Code int }
			}
			if err := json.Unmarshal(out.Bytes(), &resp); err != nil || resp.Version != "2.0" || (resp.Error.Code != -32700 && resp.Error.Code != -32600) {
				t.Fatalf("%q: answer %s (%v)", line, out.Bytes(), err)
			}
		}
	})
}
