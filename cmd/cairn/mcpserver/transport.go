package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of one line of the stdio transport.
const (
	// DefaultMaxLineBytes bounds one JSON-RPC message: a store_message
	// with 1 MiB of content escaped as \u sequences fits several times.
	DefaultMaxLineBytes = 16 << 20
	// maxNesting bounds how deep a message's JSON may nest (the envelope,
	// params, arguments and any metadata together).
	maxNesting = 128
)

// StdioTransport is newline-delimited JSON-RPC over a reader and a writer
// that never ends a session because of one bad line: a line that is not
// JSON is answered with a parse error (-32700), a line that is JSON but
// not a JSON-RPC 2.0 message (an array, no "jsonrpc", an object or null
// id, too deep, too long) or a request reusing the id of one in progress
// with an invalid request error (-32600), and reading goes on with the next
// line. An error answer of the server without a code gets one (-32600 for
// a request made before initialize, -32603 otherwise). At the end of input it answers every request it
// has handed to the server before reporting the end, so that a client
// which pipes its calls and closes stdin gets every answer.
//
// The SDK's own IOTransport ends the session on the first such line.
type StdioTransport struct {
	Reader io.ReadCloser
	Writer io.WriteCloser
	// MaxLineBytes bounds one line; 0 means DefaultMaxLineBytes. A longer
	// line is skipped without being buffered whole.
	MaxLineBytes int
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	if t.Reader == nil || t.Writer == nil {
		return nil, errors.New("mcpserver: StdioTransport needs a Reader and a Writer")
	}
	limit := t.MaxLineBytes
	if limit <= 0 {
		limit = DefaultMaxLineBytes
	}
	c := &stdioConn{
		r:        t.Reader,
		w:        t.Writer,
		incoming: make(chan readResult),
		closed:   make(chan struct{}),
		answered: make(chan struct{}, 1),
	}
	c.mu.pending = map[jsonrpc.ID]pendingRequest{}
	go c.readLoop(bufio.NewReaderSize(t.Reader, 64<<10), limit)
	return c, nil
}

type readResult struct {
	msg jsonrpc.Message
	err error // io.EOF at the end of input, or the reader's error
}

// stdioConn is one session's connection. The read loop owns the reader;
// writes (the server's and the loop's own error answers) are serialized
// by writeMu.
type stdioConn struct {
	r io.ReadCloser
	w io.WriteCloser

	incoming chan readResult
	closed   chan struct{}
	closeMu  sync.Once

	writeMu sync.Mutex

	mu struct {
		sync.Mutex
		// pending holds the requests handed to the server and not
		// answered yet, by id.
		pending map[jsonrpc.ID]pendingRequest
		// initializeSeen is set once an initialize request was handed on.
		initializeSeen bool
	}
	answered chan struct{} // signalled when a pending request is answered
}

// pendingRequest is a request handed to the server and not answered yet.
type pendingRequest struct {
	// beforeInitialize: it came before any initialize request, so an error
	// the server answers it with is the client's (invalid request).
	beforeInitialize bool
}

// SessionID implements mcp.Connection; stdio has no session id.
func (c *stdioConn) SessionID() string { return "" }

// Read returns the next valid message. At the end of input it waits until
// every request it returned has been answered, then returns io.EOF. A
// request whose id is that of a request still pending is answered here
// with an invalid request error: the SDK would drop it without an answer.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case r := <-c.incoming:
			if r.err != nil {
				c.drain(ctx)
				return nil, r.err
			}
			req, ok := r.msg.(*jsonrpc.Request)
			if !ok || !req.ID.IsValid() {
				return r.msg, nil
			}
			c.mu.Lock()
			_, dup := c.mu.pending[req.ID]
			if !dup {
				c.mu.pending[req.ID] = pendingRequest{beforeInitialize: !c.mu.initializeSeen && req.Method != "initialize"}
				c.mu.initializeSeen = c.mu.initializeSeen || req.Method == "initialize"
			}
			c.mu.Unlock()
			if dup {
				c.refuse(req.ID.Raw(), jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: id %v is the id of a request still in progress", req.ID.Raw()))
				continue
			}
			return r.msg, nil
		}
	}
}

// drainIdle bounds how long the end of input waits without any answer
// being written: a request the server never answers (one the client
// cancelled, say) must not keep the process alive.
const drainIdle = time.Minute

// drain waits until no request is pending, the connection closes, ctx
// ends or no answer came for drainIdle.
func (c *stdioConn) drain(ctx context.Context) {
	idle := time.NewTimer(drainIdle)
	defer idle.Stop()
	for {
		c.mu.Lock()
		n := len(c.mu.pending)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.answered:
			idle.Reset(drainIdle)
		case <-c.closed:
			return
		case <-ctx.Done():
			return
		case <-idle.C:
			return
		}
	}
}

// Write sends msg as one line.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	resp, isResp := msg.(*jsonrpc.Response)
	var pending pendingRequest
	var was bool
	if isResp {
		c.mu.Lock()
		pending, was = c.mu.pending[resp.ID]
		c.mu.Unlock()
		msg = withErrorCode(resp, pending)
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("mcpserver: encode message: %w", err)
	}
	if err := c.writeLine(data); err != nil {
		return err
	}
	if isResp {
		c.mu.Lock()
		delete(c.mu.pending, resp.ID)
		c.mu.Unlock()
		if was {
			select {
			case c.answered <- struct{}{}:
			default:
			}
		}
	}
	return nil
}

// withErrorCode gives a JSON-RPC error code to an error answer that has
// none: the SDK answers some protocol errors (a call before initialize)
// with a plain Go error, which goes out as code 0, a code JSON-RPC does
// not define. A request made before initialize was the client's error
// (invalid request); any other is the server's (internal error).
func withErrorCode(resp *jsonrpc.Response, req pendingRequest) *jsonrpc.Response {
	var coded *jsonrpc.Error
	if resp.Error == nil || errors.As(resp.Error, &coded) {
		return resp
	}
	code := int64(jsonrpc.CodeInternalError)
	if req.beforeInitialize {
		code = jsonrpc.CodeInvalidRequest
	}
	out := *resp
	out.Error = &jsonrpc.Error{Code: code, Message: resp.Error.Error()}
	return &out
}

func (c *stdioConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.w.Write(append(data, '\n'))
	return err
}

// Close closes both streams; it may be called more than once.
func (c *stdioConn) Close() error {
	var err error
	c.closeMu.Do(func() {
		close(c.closed)
		err = errors.Join(c.r.Close(), c.w.Close())
	})
	return err
}

// readLoop reads lines until the end of input, answers bad ones itself and
// hands the valid ones to Read.
func (c *stdioConn) readLoop(br *bufio.Reader, limit int) {
	for {
		line, tooLong, err := readLine(br, limit)
		if tooLong {
			c.refuse(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: line longer than %d bytes (skipped)", limit))
		} else if msg, ok := c.message(line); ok {
			select {
			case c.incoming <- readResult{msg: msg}:
			case <-c.closed:
				return
			}
		}
		if err != nil {
			select {
			case c.incoming <- readResult{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// readLine returns the next line without its line ending. A line longer
// than limit is discarded up to its end and reported as tooLong. err is
// io.EOF (or the read error) once input ends; line may then hold a last
// line without a newline.
func readLine(br *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, e := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+2 { // +2: the line ending
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if e == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, e
	}
}

// message validates one line. Bad lines are answered here and ok is false;
// blank lines are skipped.
func (c *stdioConn) message(line []byte) (jsonrpc.Message, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, false
	}
	if !utf8.Valid(line) || !json.Valid(line) {
		c.refuse(nil, jsonrpc.CodeParseError, "parse error: the line is not valid JSON in UTF-8")
		return nil, false
	}
	if line[0] != '{' {
		c.refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: a message must be one JSON object (batches are not supported)")
		return nil, false
	}
	if nestingDepth(line) > maxNesting {
		c.refuse(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: JSON nested deeper than %d levels", maxNesting))
		return nil, false
	}
	var env struct {
		Version *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
	}
	_ = json.Unmarshal(line, &env) // valid JSON object: fields of the wrong type are checked below
	id, idErr := envelopeID(env.ID)
	if idErr != nil {
		c.refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: "+idErr.Error())
		return nil, false
	}
	if string(env.ID) == "null" && len(env.Method) > 0 {
		// JSON-RPC would answer a null id like any other; MCP forbids it,
		// and the SDK would take the request for a notification and never
		// answer it.
		c.refuse(nil, jsonrpc.CodeInvalidRequest, `invalid request: "id" must be a string or a number, not null`)
		return nil, false
	}
	if env.Version == nil || *env.Version != "2.0" {
		c.refuse(id, jsonrpc.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
		return nil, false
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		c.refuse(id, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		return nil, false
	}
	return msg, true
}

// envelopeID returns a message's id: absent or null (nil), a string or a
// number; anything else is refused.
func envelopeID(raw json.RawMessage) (any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	switch v.(type) {
	case string, float64:
		return v, nil
	}
	return nil, fmt.Errorf(`"id" must be a string or a number, got %s`, jsonKind(raw))
}

func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	}
	return string(raw)
}

// nestingDepth is the deepest nesting of objects and arrays in valid JSON.
func nestingDepth(data []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, b := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
			deepest = max(deepest, depth)
		case b == '}' || b == ']':
			depth--
		}
	}
	return deepest
}

// refuse answers a line the server never sees with a JSON-RPC error. id
// is the message's own id when it could be read, else null.
func (c *stdioConn) refuse(id any, code int64, message string) {
	resp := struct {
		Version string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{Version: "2.0", ID: id}
	resp.Error.Code, resp.Error.Message = code, message
	data, err := json.Marshal(resp)
	if err != nil {
		return
	}
	// A failed write shows up on the server's next write too.
	_ = c.writeLine(data)
}
