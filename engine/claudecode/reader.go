package claudecode

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/engine/redact"
)

// DefaultMaxLineBytes is the longest line Read accepts when
// Options.MaxLineBytes is 0 (tool results with images reach a few MiB).
const DefaultMaxLineBytes = 16 << 20

// MaxSkipSamples bounds Report.Samples.
const MaxSkipSamples = 50

// ErrCorrupt is wrapped by errors about records that cannot be decoded
// (SplitContent, JoinContent, Canonical).
var ErrCorrupt = errors.New("claudecode: corrupt record")

// Reason says why a line was skipped.
type Reason string

// Skip reasons.
const (
	ReasonMalformed   Reason = "malformed-json" // not a JSON object
	ReasonInvalidUTF8 Reason = "invalid-utf8"   // bytes that are not UTF-8
	ReasonTooLong     Reason = "line-too-long"  // longer than MaxLineBytes
	ReasonTruncated   Reason = "truncated"      // last line without newline
	ReasonMissing     Reason = "missing-field"  // a required field is absent
	ReasonBadField    Reason = "bad-field"      // a field has the wrong form
	ReasonUnknownType Reason = "unknown-type"   // type not known to cairn
	ReasonNoContent   Reason = "no-content"     // known type that carries no conversation
	ReasonEmptyLine   Reason = "empty-line"     // blank line
)

// Skip describes one skipped line.
type Skip struct {
	Line   int    // 1-based line number in the file
	Offset int64  // byte offset of the line
	Reason Reason // why
	Detail string // e.g. the JSON error or the unknown type
}

// Report summarises one Read.
type Report struct {
	Lines   int            // lines seen, including skipped ones
	Records int            // records passed to the callback
	Skipped map[Reason]int // skipped lines per reason
	Samples []Skip         // the first MaxSkipSamples skipped lines
	// Redactions counts redacted spans per rule.
	Redactions redact.Report
	// EndOffset is the offset just after the last complete line (one that
	// ends with a newline); resume a grown file from there.
	EndOffset int64
}

// SkippedTotal returns the number of skipped lines.
func (r *Report) SkippedTotal() int {
	n := 0
	for _, c := range r.Skipped {
		n += c
	}
	return n
}

// String renders the skip counts, e.g. "malformed-json=2 truncated=1".
func (r *Report) String() string {
	keys := make([]string, 0, len(r.Skipped))
	for k := range r.Skipped {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, r.Skipped[Reason(k)])
	}
	return strings.Join(parts, " ")
}

func (r *Report) skip(line int, off int64, reason Reason, detail string) {
	if r.Skipped == nil {
		r.Skipped = make(map[Reason]int)
	}
	r.Skipped[reason]++
	if len(r.Samples) < MaxSkipSamples {
		if len(detail) > 200 {
			detail = detail[:200]
		}
		r.Samples = append(r.Samples, Skip{Line: line, Offset: off, Reason: reason, Detail: strings.ToValidUTF8(detail, "?")})
	}
}

// Options configure Read. The zero value means defaults.
type Options struct {
	// MaxLineBytes: longer lines are skipped (ReasonTooLong); 0 means
	// DefaultMaxLineBytes.
	MaxLineBytes int
	// Redactor redacts every string value of every record; nil redacts
	// nothing.
	Redactor *redact.Redactor
	// StartOffset is where reading starts (a previous Report.EndOffset) and
	// StartLine the line number of that offset minus one.
	StartOffset int64
	StartLine   int
	// DefaultSessionID is used for records without a sessionId (summary
	// records); usually the file's stem.
	DefaultSessionID string
}

// Record is one usable line of a session file.
type Record struct {
	Line   int   // 1-based line number
	Offset int64 // byte offset of the line

	Type        string // user, assistant, system or summary
	UUID        string // empty for summary records
	ParentUUID  string
	SessionID   string
	Timestamp   time.Time // zero when absent (summary records)
	Role        string    // message.role, or the type for system and summary
	Model       string    // message.model of assistant records
	IsMeta      bool      // isMeta: a user record Claude Code wrote itself (command output, caveats)
	IsSidechain bool
	IsCompact   bool   // isCompactSummary, or a system compact_boundary
	Summary     string // summary records
	LeafUUID    string // summary records
	Blocks      []Block

	// JSON is the record, redacted and in canonical form (see Canonical).
	JSON []byte
}

// Key identifies a record within its session: its uuid, or for summary
// records (which have none) "summary:" and the first 32 hex digits of the
// SHA-256 of the canonical record.
func (r *Record) Key() string {
	if r.UUID != "" {
		return r.UUID
	}
	sum := sha256.Sum256(r.JSON)
	return "summary:" + hex.EncodeToString(sum[:16])
}

// Human reports whether a person wrote the record: a user record that is
// not Claude Code's own (isMeta, compaction summaries) and carries text
// rather than only tool results, which the agent's tools wrote.
func (r *Record) Human() bool {
	if r.Role != "user" || r.IsMeta || r.IsCompact || r.IsSidechain {
		return false
	}
	for _, b := range r.Blocks {
		if b.Type != "tool_result" {
			return true
		}
	}
	return false
}

// Block is one content block, reduced to what search and Markdown need.
type Block struct {
	Type    string          // text, thinking, tool_use, tool_result, image, or the block's own type
	Text    string          // text, thinking, tool_result text, summary
	Name    string          // tool_use: tool name
	ID      string          // tool_use id, or tool_result tool_use_id
	Input   json.RawMessage // tool_use input (canonical JSON)
	IsError bool            // tool_result
}

// Text returns the searchable text of the record: text and thinking blocks,
// tool calls as "tool NAME: INPUT" and tool results, separated by blank
// lines.
func (r *Record) Text() string {
	var parts []string
	for _, b := range r.Blocks {
		switch b.Type {
		case "text", "thinking", "tool_result":
			if strings.TrimSpace(b.Text) != "" {
				parts = append(parts, b.Text)
			}
		case "tool_use":
			s := "tool " + b.Name
			if len(b.Input) > 0 && string(b.Input) != "{}" {
				s += ": " + string(b.Input)
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n\n")
}

// ValidUUID reports whether s has the 8-4-4-4-12 hex form of a UUID.
func ValidUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// noContentTypes are record types Claude Code writes that hold no
// conversation text.
var noContentTypes = map[string]bool{
	"file-history-snapshot": true,
	"queue-operation":       true,
	"custom-title":          true,
	"progress":              true,
	"attachment":            true,
	"last-prompt":           true,
	"agent-name":            true,
	"pr-link":               true,
	"tag":                   true,
}

// Read reads records from r, starting at opts.StartOffset (r must already be
// positioned there), and calls fn for each usable one in file order. A
// non-nil error from fn or a read error stops Read and is returned; skipped
// lines never are errors.
func Read(ctx context.Context, r io.Reader, opts Options, fn func(*Record) error) (*Report, error) {
	max := opts.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	rep := &Report{EndOffset: opts.StartOffset}
	br := bufio.NewReaderSize(r, 64<<10)
	off := opts.StartOffset
	line := opts.StartLine
	var buf []byte
	for {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		buf = buf[:0]
		tooLong := false
		n := 0
		var rerr error
		for {
			chunk, err := br.ReadSlice('\n')
			n += len(chunk)
			if !tooLong {
				if len(buf)+len(chunk) > max+1 {
					tooLong = true
					buf = buf[:0]
				} else {
					buf = append(buf, chunk...)
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			rerr = err
			break
		}
		if n == 0 && rerr == io.EOF {
			return rep, nil
		}
		if rerr != nil && rerr != io.EOF {
			return rep, fmt.Errorf("claudecode: read: %w", rerr)
		}
		line++
		rep.Lines++
		lineOff := off
		off += int64(n)
		complete := rerr == nil // ended with '\n'
		if !complete {
			// The writer may still be appending: do not consume it.
			rep.skip(line, lineOff, ReasonTruncated, fmt.Sprintf("%d bytes without a newline at end of file", n))
			return rep, nil
		}
		rep.EndOffset = off
		if tooLong {
			rep.skip(line, lineOff, ReasonTooLong, fmt.Sprintf("%d bytes > %d", n, max))
			continue
		}
		text := bytes.TrimRight(buf, "\r\n")
		if len(bytes.TrimSpace(text)) == 0 {
			rep.skip(line, lineOff, ReasonEmptyLine, "")
			continue
		}
		if !utf8.Valid(text) {
			rep.skip(line, lineOff, ReasonInvalidUTF8, "")
			continue
		}
		rec, reason, detail := parse(text, opts)
		if reason != "" {
			rep.skip(line, lineOff, reason, detail)
			continue
		}
		rec.Line, rec.Offset = line, lineOff
		if opts.Redactor != nil {
			if err := redactRecord(rec, opts.Redactor, &rep.Redactions); err != nil {
				rep.skip(line, lineOff, ReasonMalformed, err.Error())
				continue
			}
		}
		rep.Records++
		if err := fn(rec); err != nil {
			return rep, err
		}
	}
}

// raw is the part of a record Read looks at.
type raw struct {
	Type              string          `json:"type"`
	UUID              *string         `json:"uuid"`
	ParentUUID        *string         `json:"parentUuid"`
	LogicalParentUUID *string         `json:"logicalParentUuid"`
	SessionID         *string         `json:"sessionId"`
	Timestamp         *string         `json:"timestamp"`
	IsSidechain       bool            `json:"isSidechain"`
	IsMeta            bool            `json:"isMeta"`
	IsCompactSummary  bool            `json:"isCompactSummary"`
	Subtype           string          `json:"subtype"`
	Content           json.RawMessage `json:"content"` // system records
	Summary           *string         `json:"summary"`
	LeafUUID          *string         `json:"leafUuid"`
	Message           *struct {
		Role    string          `json:"role"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

func parse(text []byte, opts Options) (*Record, Reason, string) {
	if text[0] != '{' {
		return nil, ReasonMalformed, "not a JSON object"
	}
	var v raw
	if err := json.Unmarshal(text, &v); err != nil {
		return nil, ReasonMalformed, err.Error()
	}
	canon, err := Canonical(text)
	if err != nil {
		return nil, ReasonMalformed, err.Error()
	}
	rec := &Record{Type: v.Type, IsSidechain: v.IsSidechain, IsMeta: v.IsMeta, JSON: canon}
	switch v.Type {
	case "user", "assistant", "system", "summary":
	case "":
		return nil, ReasonMissing, "type"
	default:
		if noContentTypes[v.Type] {
			return nil, ReasonNoContent, v.Type
		}
		return nil, ReasonUnknownType, v.Type
	}
	sid := opts.DefaultSessionID
	if v.SessionID != nil {
		sid = *v.SessionID
	}
	if sid == "" {
		return nil, ReasonMissing, "sessionId"
	}
	if !ValidUUID(sid) {
		return nil, ReasonBadField, "sessionId is not a UUID"
	}
	rec.SessionID = strings.ToLower(sid)

	if v.Type == "summary" {
		if v.Summary == nil || v.LeafUUID == nil {
			return nil, ReasonMissing, "summary/leafUuid"
		}
		if !ValidUUID(*v.LeafUUID) {
			return nil, ReasonBadField, "leafUuid is not a UUID"
		}
		rec.Summary, rec.LeafUUID, rec.Role, rec.IsCompact = *v.Summary, *v.LeafUUID, "summary", true
		rec.Blocks = []Block{{Type: "text", Text: *v.Summary}}
		return rec, "", ""
	}
	if v.UUID == nil || *v.UUID == "" {
		return nil, ReasonMissing, "uuid"
	}
	if !ValidUUID(*v.UUID) {
		return nil, ReasonBadField, "uuid is not a UUID"
	}
	rec.UUID = *v.UUID
	if v.ParentUUID != nil {
		rec.ParentUUID = *v.ParentUUID
	} else if v.LogicalParentUUID != nil {
		rec.ParentUUID = *v.LogicalParentUUID
	}
	if rec.ParentUUID != "" && !ValidUUID(rec.ParentUUID) {
		return nil, ReasonBadField, "parentUuid is not a UUID"
	}
	if v.Timestamp == nil {
		return nil, ReasonMissing, "timestamp"
	}
	ts, err := time.Parse(time.RFC3339Nano, *v.Timestamp)
	if err != nil {
		return nil, ReasonBadField, "timestamp: " + err.Error()
	}
	rec.Timestamp = ts.UTC()
	rec.IsCompact = v.IsCompactSummary || v.Subtype == "compact_boundary"
	var content json.RawMessage
	switch {
	case v.Type == "system":
		rec.Role = "system"
		content = v.Content
		if v.Message != nil {
			content = v.Message.Content
		}
	case v.Message == nil:
		return nil, ReasonMissing, "message"
	default:
		rec.Role, rec.Model = v.Message.Role, v.Message.Model
		if rec.Role == "" {
			rec.Role = v.Type
		}
		content = v.Message.Content
	}
	blocks, err := decodeBlocks(content)
	if err != nil {
		return nil, ReasonBadField, "message.content: " + err.Error()
	}
	rec.Blocks = blocks
	return rec, "", ""
}

// decodeBlocks turns message content (a string, an array of blocks, or
// absent) into Blocks.
func decodeBlocks(content json.RawMessage) ([]Block, error) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 || string(content) == "null" {
		return nil, nil
	}
	if content[0] == '"' {
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return nil, err
		}
		return []Block{{Type: "text", Text: s}}, nil
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(content, &arr); err != nil {
		return nil, errors.New("neither a string nor an array of blocks")
	}
	out := make([]Block, 0, len(arr))
	for _, a := range arr {
		var b struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			Thinking  string          `json:"thinking"`
			Name      string          `json:"name"`
			ID        string          `json:"id"`
			ToolUseID string          `json:"tool_use_id"`
			Input     json.RawMessage `json:"input"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if err := json.Unmarshal(a, &b); err != nil {
			return nil, errors.New("a block is not an object")
		}
		blk := Block{Type: b.Type}
		switch b.Type {
		case "text":
			blk.Text = b.Text
		case "thinking":
			blk.Text = b.Thinking
		case "redacted_thinking":
		case "tool_use", "server_tool_use":
			blk.Type = "tool_use"
			blk.Name, blk.ID = b.Name, b.ID
			if len(b.Input) > 0 {
				in, err := Canonical(b.Input)
				if err != nil {
					return nil, err
				}
				blk.Input = in
			}
		case "tool_result":
			blk.ID, blk.IsError = b.ToolUseID, b.IsError
			inner, err := decodeBlocks(b.Content)
			if err != nil {
				return nil, fmt.Errorf("tool_result content: %w", err)
			}
			var texts []string
			for _, ib := range inner {
				if ib.Text != "" {
					texts = append(texts, ib.Text)
				}
			}
			blk.Text = strings.Join(texts, "\n")
		}
		out = append(out, blk)
	}
	return out, nil
}

// redactRecord redacts every string value of rec.JSON and rebuilds the
// record's decoded fields from the result.
func redactRecord(rec *Record, r *redact.Redactor, total *redact.Report) error {
	v, err := decodeAny(rec.JSON)
	if err != nil {
		return err
	}
	var rep redact.Report
	v = redactValue(v, r, &rep)
	if rep.Total() == 0 {
		return nil
	}
	total.Add(rep)
	canon, err := encodeAny(v)
	if err != nil {
		return err
	}
	line, off := rec.Line, rec.Offset
	nr, reason, detail := parse(canon, Options{DefaultSessionID: rec.SessionID})
	if reason != "" {
		return fmt.Errorf("%w: after redaction: %s %s", ErrCorrupt, reason, detail)
	}
	*rec = *nr
	rec.Line, rec.Offset = line, off
	return nil
}

func redactValue(v any, r *redact.Redactor, rep *redact.Report) any {
	switch t := v.(type) {
	case string:
		out, n := r.Redact(t)
		rep.Add(n)
		return out
	case []any:
		for i := range t {
			t[i] = redactValue(t[i], r, rep)
		}
		return t
	case map[string]any:
		for k, x := range t {
			t[k] = redactValue(x, r, rep)
		}
		return t
	default:
		return v
	}
}
