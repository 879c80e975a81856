package engine

import (
	"context"
	"time"
)

// The types of the Store port's operations beyond messages and search
// (engine/backend.go): those of MaintenanceStore (counts, retention,
// quota), CursorStore's marks, SessionStore and TransferStore.

// Progress reports how far a long operation is.
type Progress struct {
	Done, Total int64 // work units (bytes for imports, items otherwise)
	Item        string
}

// TimelineCount is the number of messages of one channel type in one
// bucket of a timeline.
type TimelineCount struct {
	ChannelType   string
	Bucket, Count int64
}

// BackendStats is what Store.Stats counts: messages per channel, type
// and agent ("name" or "name@project"), sessions, and the bytes of the
// store's parts (Bytes.Total is the whole store; Models stays 0: the
// Engine adds the data dir's models), with notes on what could not be
// measured.
type BackendStats struct {
	ByChannel, ByType, ByAgent map[string]int64
	Sessions                   SessionStats
	Bytes                      DiskStats
	Notes                      []string
}

// MarkRow is one message's cached breadcrumb check.
type MarkRow struct {
	// Repo is the top directory of the repository the marks were
	// computed in; "" for a message that recorded none and was tried at
	// Head without being found there (no mark).
	Repo  string
	Head  string
	Worst int
	Marks string // JSON array of BreadcrumbMark
}

// RetentionRow is what retention policies read of a message.
type RetentionRow struct {
	ID         int64
	Channel    string
	Type       string
	Confidence float64
	CreatedAt  time.Time
	// Pinned: metadata "pinned" is true, 1 or "true".
	Pinned bool
}

// SessionTx is what one file's import writes of sessions (the tables of
// migrations/0002_sessions.sql), inside one transaction.
type SessionTx interface {
	// FileState is where the last import of path stopped; false if none.
	FileState(ctx context.Context, path string) (SessionFile, bool, error)
	// PutFileState records where this import of path stopped.
	PutFileState(ctx context.Context, path string, f SessionFile, now int64) error
	// EnsureChannel creates the sessions' channel with its description.
	EnsureChannel(ctx context.Context, id, description string, now int64) error
	// StartSession creates the session's row unless it exists and returns
	// its last record number (0 for none).
	StartSession(ctx context.Context, id, project string, now int64) (int, error)
	// RecordKnown reports whether the session holds a record with key.
	RecordKnown(ctx context.Context, session, key string) (bool, error)
	// PutContent stores a content once; false when it was stored already.
	PutContent(ctx context.Context, hash, content, text string, tokens int) (bool, error)
	// PutChunk records that chunk idx of content hash is message id.
	PutChunk(ctx context.Context, hash string, idx, start, end, tokens int, messageID int64) error
	// PutRecord stores one record of a session.
	PutRecord(ctx context.Context, r SessionRow) error
	// FinishSession adds an import's records and time span to a session.
	FinishSession(ctx context.Context, s SessionUpdate) error
}

// SessionFile is where the import of a file stopped: bytes and lines
// consumed, and the SHA-256 of the file's head.
type SessionFile struct {
	End   int64
	Lines int
	Head  string
}

// SessionRow is one record as a SessionTx stores it.
type SessionRow struct {
	Session, Key, UUID, ParentUUID, Type, Role string
	Seq                                        int
	CreatedAt                                  int64 // Unix ms, 0 for none
	IsSidechain, IsCompact                     bool
	ContentHash                                string // "" for none
	Envelope                                   string
}

// SessionUpdate is what one import adds to a session: records, the time
// span of their timestamps (0: none), and cwd and branch when unknown.
type SessionUpdate struct {
	ID               string
	Added            int
	First, Last, Now int64
	CWD, GitBranch   string
}

// PartCounts counts what a store holds of each part (Store.PartCounts).
type PartCounts struct {
	Sessions int64 `json:"sessions"`
	Records  int64 `json:"session_records"`
	Contents int64 `json:"session_contents"`
	Chunks   int64 `json:"session_chunks"`
	Files    int64 `json:"session_files"`
	Cursors  int64 `json:"read_cursors"`
	Marks    int64 `json:"breadcrumb_marks"`
	// RecordsMiscounted are sessions whose message_count is not their
	// number of records.
	RecordsMiscounted []string `json:"sessions_miscounted,omitempty"`
}

// PartCountsQuery counts the parts in the tables both stores name alike,
// in SQL both dialects read the same way; a store scans its one row with
// PartCounts.Targets.
const PartCountsQuery = `SELECT
	(SELECT count(*) FROM sessions), (SELECT count(*) FROM session_messages),
	(SELECT count(*) FROM session_contents), (SELECT count(*) FROM session_chunks),
	(SELECT count(*) FROM session_files), (SELECT count(*) FROM read_cursors),
	(SELECT count(*) FROM breadcrumb_marks)`

// Targets are the scan destinations of PartCountsQuery's columns.
func (c *PartCounts) Targets() []any {
	return []any{&c.Sessions, &c.Records, &c.Contents, &c.Chunks, &c.Files, &c.Cursors, &c.Marks}
}

// ContentRow is one session content as stored, with its chunks.
type ContentRow struct {
	Hash, Content, Text string
	Tokens              int
	Chunks              []ChunkRow
}

// ChunkRow is one chunk of a content: text[Start:End], stored as message
// MessageID (0: the message was deleted).
type ChunkRow struct {
	Idx, Start, End, Tokens int
	MessageID               int64
}

// SessionArchive is one session as stored: its row and its records (Seq
// order; Session is the archive's ID).
type SessionArchive struct {
	ID, Source, Project, CWD, GitBranch string
	MessageCount                        int
	FirstAt, LastAt                     int64 // Unix ms, 0 for none
	ImportedAt, UpdatedAt               int64 // Unix ms
	Records                             []SessionRow
}

// FileRow is where the import of one file stopped.
type FileRow struct {
	Path string
	SessionFile
	ImportedAt int64 // Unix ms
}

// CursorRow is one read cursor as stored (Scope as in CursorStore:
// CursorScope's keys).
type CursorRow struct {
	Agent, Scope string
	LastReadID   int64
	UpdatedAt    int64 // Unix ms
}

// MarkedRow is one message's cached breadcrumb check.
type MarkedRow struct {
	MessageID int64
	MarkRow
}

// QuotaSession is a session as the quota weighs it.
type QuotaSession struct {
	ID     string
	LastAt time.Time
	Length int64
}

// QuotaMessage is a message as the quota weighs it.
type QuotaMessage struct {
	ID         int64
	Channel    string
	Type       string
	Confidence float64
	CreatedAt  time.Time
	Length     int64
}
