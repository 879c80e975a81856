package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// TestStdioDuplicatePendingID: a request whose id is the id of a request
// still in progress is answered with an invalid request error carrying
// that id, and not handed to the server (JSON-RPC ids must be unique among
// pending requests); once the first is answered, its id may be used again.
func TestStdioDuplicatePendingID(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
	}, "\n") + "\n"
	out := &bufCloser{}
	conn, err := (&StdioTransport{Reader: io.NopCloser(strings.NewReader(in)), Writer: out}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ids := []string{}
	for range 2 {
		msg, err := conn.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			t.Fatalf("read %T", msg)
		}
		ids = append(ids, fmt.Sprint(req.ID.Raw()), req.Method)
	}
	if fmt.Sprint(ids) != "[1 ping 2 ping]" {
		t.Errorf("handed to the server: %v, want the first request 1 and request 2", ids)
	}
	var resp struct {
		ID    json.RawMessage `json:"id"`
		Error struct{ Code int }
	}
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil || string(resp.ID) != "1" || resp.Error.Code != -32600 {
		t.Errorf("answer to the duplicate: %s (%v), want error -32600 with id 1", out.Bytes(), err)
	}
}
