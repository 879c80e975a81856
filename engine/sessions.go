package engine

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/engine/claudecode"
)

// Imported Claude Code sessions as the store keeps them (SessionStore);
// engine/ingest imports, reads and exports them.

// SessionChannel is the channel that holds the searchable chunks of
// imported sessions. Chunk messages have type TypeSessionChunk; their
// sender is SessionAgent for what the agent and its tools wrote, and
// the import's human sender (ingest.DefaultHumanSender) for what a person
// typed. The record's role (user, assistant, system, summary) and model
// are in the metadata.
const SessionChannel = "claude-code"

// SessionAgent is the sender of the agent's side of imported sessions.
const SessionAgent = "claude-code"

// TypeSessionChunk is the message type of session chunks.
const TypeSessionChunk = "session"

// Session is an imported session.
type Session struct {
	ID           string    `json:"id"`
	Source       string    `json:"source"`
	Project      string    `json:"project"`
	CWD          string    `json:"cwd"`
	GitBranch    string    `json:"git_branch"`
	MessageCount int       `json:"message_count"`
	FirstAt      time.Time `json:"first_at"`
	LastAt       time.Time `json:"last_at"`
	ImportedAt   time.Time `json:"imported_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// SessionRecord is one record of a session, in order.
type SessionRecord struct {
	Seq         int             `json:"seq"`
	UUID        string          `json:"uuid,omitempty"`
	ParentUUID  string          `json:"parent_uuid,omitempty"`
	Type        string          `json:"type"`
	Role        string          `json:"role"`
	CreatedAt   time.Time       `json:"created_at"` // zero for summary records
	IsSidechain bool            `json:"is_sidechain"`
	IsCompact   bool            `json:"is_compact"`
	ContentHash string          `json:"content_hash,omitempty"`
	Text        string          `json:"text"`
	Content     json.RawMessage `json:"content,omitempty"` // canonical message content
	Envelope    json.RawMessage `json:"envelope"`          // canonical record without content
}

// JSON returns the canonical record (envelope with content put back), as
// the JSONL export writes it.
func (r SessionRecord) JSON() ([]byte, error) {
	var content []byte
	if r.Content != nil {
		content = r.Content
	}
	return claudecode.JoinContent(r.Envelope, content)
}

// SessionRef points from a chunk message to a session record holding it.
type SessionRef struct {
	SessionID string `json:"session_id"`
	Seq       int    `json:"seq"`
	UUID      string `json:"uuid,omitempty"`
	Chunk     int    `json:"chunk"`
	Start     int    `json:"start"` // byte range of the chunk in the record's text
	End       int    `json:"end"`
}

// ParseSessionID checks that id names a session (a UUID) and returns it
// in lower case; else an *InvalidError on "session".
func ParseSessionID(id string) (string, error) {
	if !claudecode.ValidUUID(id) {
		return "", invalid("session", "must be a UUID (8-4-4-4-12 hex digits), got %q", id)
	}
	return strings.ToLower(id), nil
}
