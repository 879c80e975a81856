package engine

import (
	"context"
	"time"
)

// The operations beyond messages and search that a Backend may serve.
// Each is an optional interface, checked with a type assertion where the
// Engine's method starts: a Backend that lacks one keeps refusing that
// operation with an *InvalidError naming the store (unsupportedOnBackend).
// Validation stays in the Engine's method, before the Backend is asked.

// ChannelStore keeps plain channels created by name (with a display name
// and a description) on a Backend.
type ChannelStore interface {
	// CreateChannel inserts c, a plain channel, and the channels of its
	// project (c.ProjectID != "") as a first write does; false when the id
	// is taken (nothing is changed then).
	CreateChannel(ctx context.Context, c Channel) (bool, error)
	// ChannelMessageIDs returns the ids of a channel's messages in id
	// order.
	ChannelMessageIDs(ctx context.Context, channel string) ([]int64, error)
}

// StatsStore counts what a Backend holds, for StoreStats and Timeline.
type StatsStore interface {
	Stats(ctx context.Context) (BackendStats, error)
	// TimelineCounts counts the messages created in [start, end) (Unix
	// ms) per channel type and bucket (created_at - start) / width.
	TimelineCounts(ctx context.Context, start, width, end int64) ([]TimelineCount, error)
}

// TimelineCount is the number of messages of one channel type in one
// bucket of a timeline.
type TimelineCount struct {
	ChannelType   string
	Bucket, Count int64
}

// BackendStats is what a StatsStore counts: messages per channel, type
// and agent ("name" or "name@project"), and the bytes of the store's
// parts (Bytes.SQLite stays 0; Bytes.Total is the whole store).
type BackendStats struct {
	ByChannel, ByType, ByAgent map[string]int64
	Sessions                   SessionStats
	Bytes                      DiskStats
}

// ConsistencyStore compares a Backend's messages with its keyword entries,
// its counters and its vector sets, for Consistency and Check.
type ConsistencyStore interface {
	// Consistency fills a CheckReport: Messages, FTSRows (messages whose
	// keyword entry matches their terms), FTSMissing/FTSExtra,
	// FTSIntegrity ("ok" or what differs in the keyword statistics), one
	// SetCheck per live vector set, and Problems in words (counters of
	// channels and agents included).
	Consistency(ctx context.Context) (CheckReport, error)
}

// CursorStore keeps the agents' read cursors (Unread, MarkRead, the
// unread_by filter) on a Backend. Scopes are cursorScope's keys: "" (every
// channel), "channel:ID", "project:P".
type CursorStore interface {
	// Unread returns up to limit messages of scope (channel or project,
	// both "" for every channel) that agent did not write and has not
	// read, in id order, and their count. ErrNotFound for an unknown
	// channel. No message written concurrently may later commit with an
	// id at or below the last one returned.
	Unread(ctx context.Context, agent, channel, project string, limit int) ([]Message, int64, error)
	// MarkRead moves agent's cursor of scope to upTo (0: the newest id
	// given so far), never back; an id not given yet is an *InvalidError
	// on up_to. ErrNotFound for an unknown channel.
	MarkRead(ctx context.Context, agent, scope, channel string, upTo int64, now time.Time) (ReadCursor, error)
	// UnreadAmong returns which of ids agent did not write and has not
	// read.
	UnreadAmong(ctx context.Context, agent string, ids []int64) (map[int64]bool, error)
}

// MarkStore keeps the breadcrumb marks cache (and the breadcrumbs_valid
// filter) on a Backend.
type MarkStore interface {
	// PutMarks stores each message's row (repository, head, marks JSON
	// and worst state), replacing what was cached of it; ids of deleted
	// messages are skipped.
	PutMarks(ctx context.Context, marks map[int64]MarkRow) error
	// MessagesToMark returns up to limit messages with breadcrumbs and
	// an id above after that belong to repo and have no marks at head, in
	// id order (Engine.MessagesToMark says which belong).
	MessagesToMark(ctx context.Context, repo, head string, after int64, limit int) ([]Message, error)
	// Marks returns the cached rows of those of ids that have one.
	Marks(ctx context.Context, ids []int64) (map[int64]MarkRow, error)
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

// RetentionStore lets GC and Purge delete messages on a Backend. Imported
// sessions are not kept on a Backend, so their parts of GC and Purge have
// nothing to do there.
type RetentionStore interface {
	// RetentionRows returns every message's retention facts, ordered by
	// channel, then confidence, time and id, all descending.
	RetentionRows(ctx context.Context) ([]RetentionRow, error)
	// MessageIDsOf returns, in id order, the ids of the messages of channel
	// (channel != "") or else those agent sent under any project; false
	// when there is no such channel or agent.
	MessageIDsOf(ctx context.Context, channel, agent string) ([]int64, bool, error)
	// DeleteMessages deletes the messages among ids that exist, with
	// their keyword entries, vectors and marks, keeping the counters
	// right, in one transaction; with dropChannel != "" that channel goes
	// too when no message of it is left.
	DeleteMessages(ctx context.Context, ids []int64, dropChannel string) error
	// Vectors returns the vectors in set of those ids that have one.
	Vectors(ctx context.Context, set int64, ids []int64) (map[int64][]float32, error)
	// Reclaim lets the store reuse the space of deleted rows.
	Reclaim(ctx context.Context) error
	// Size is the store's size in bytes.
	Size(ctx context.Context) (int64, error)
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

// RebuildStore lets Rebuild regenerate the keyword entries and build a
// vector set of another model (or the same one again) on a Backend.
type RebuildStore interface {
	// RebuildKeywords recomputes every message's keyword entry and the
	// BM25 totals from the contents, in one transaction that writers wait
	// for.
	RebuildKeywords(ctx context.Context) error
	// BuildSet creates a building set of model (dim) with every message
	// queued for it; one that exists already is returned instead.
	BuildSet(ctx context.Context, model string, dim int, now time.Time) (VectorSet, error)
	// ActivateSet makes the building set active and retires every other
	// live set, dropping its vectors, once nothing is queued for it; false
	// when something still is.
	ActivateSet(ctx context.Context, set int64, now time.Time) (bool, error)
}

// SessionStore keeps imported Claude Code sessions on a Backend: the
// import runs the Engine's reading and chunking, writing through a
// SessionTx and the store's message write, one transaction per file.
type SessionStore interface {
	// ImportSessions runs fn in one transaction (all of it or nothing),
	// with write storing messages in that transaction as Write does. It
	// may run fn again when the store retries the transaction.
	ImportSessions(ctx context.Context, fn func(tx SessionTx, write func(context.Context, StoredMessage) (WriteResult, error)) error) error
	// Sessions returns the session with id ("" for every one), most
	// recent first.
	Sessions(ctx context.Context, id string) ([]Session, error)
	// SessionRecords returns a session's records in order; false when the
	// session does not exist.
	SessionRecords(ctx context.Context, id string) ([]SessionRecord, bool, error)
	// SessionRefs returns the records holding the chunk stored as message
	// id, oldest first.
	SessionRefs(ctx context.Context, messageID int64) ([]SessionRef, error)
	// SessionOrphans returns the contents only the given sessions hold and
	// the chunk messages (in id order) only those contents use.
	SessionOrphans(ctx context.Context, sessions []string) ([]string, []int64, error)
	// DeleteSessions deletes the sessions, the contents and the messages
	// (as RetentionStore.DeleteMessages does) in one transaction.
	DeleteSessions(ctx context.Context, sessions, contents []string, messages []int64) error
	// ForgetSessionFiles deletes where the import of the sessions' files
	// stopped (see forgetSessionFilesSQL), for purge, before the sessions
	// are deleted.
	ForgetSessionFiles(ctx context.Context, sessions []string) error
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

// TransferStore reads and writes, as stored, what a store holds besides
// messages and channels: imported sessions (records, contents with their
// chunks, where each file's import stopped), the agents' read cursors and
// the breadcrumb marks cache. cairn migrate copies them with it between
// any two stores (the data dir's embeddedStore implements it too). Message
// ids are the store's own: the caller translates them between stores.
// Every Put is idempotent, so an interrupted copy resumes by running again.
type TransferStore interface {
	// PartCounts counts each part.
	PartCounts(ctx context.Context) (PartCounts, error)
	// SessionContentsAfter returns up to limit contents with a hash above
	// after, in hash order, each with its chunks in order.
	SessionContentsAfter(ctx context.Context, after string, limit int) ([]ContentRow, error)
	// PutSessionContents stores the contents and chunks not stored yet,
	// in one transaction; it returns how many contents were new. A chunk's
	// MessageID must name a message of this store (0: none).
	PutSessionContents(ctx context.Context, cs []ContentRow) (int, error)
	// SessionsAfter returns up to limit sessions with an id above after,
	// in id order, each with every record.
	SessionsAfter(ctx context.Context, after string, limit int) ([]SessionArchive, error)
	// PutSession stores a session with its records in one transaction;
	// false (nothing written) when the store has a session of that id.
	PutSession(ctx context.Context, s SessionArchive) (bool, error)
	// SessionFiles returns where each file's import stopped.
	SessionFiles(ctx context.Context) ([]FileRow, error)
	// PutSessionFiles stores the file states of paths it has none of.
	PutSessionFiles(ctx context.Context, fs []FileRow) error
	// ReadCursors returns every read cursor.
	ReadCursors(ctx context.Context) ([]CursorRow, error)
	// PutReadCursors stores each cursor, never moving one back.
	PutReadCursors(ctx context.Context, cs []CursorRow) error
	// MarksAfter returns up to limit cached marks of messages with an id
	// above after, in id order.
	MarksAfter(ctx context.Context, after int64, limit int) ([]MarkedRow, error)
	// PutMarkRows stores each message's marks, replacing what was cached
	// of it; rows of messages that do not exist are skipped.
	PutMarkRows(ctx context.Context, ms []MarkedRow) error
	// PutAgents stores the agents the store does not know (with no
	// message: the messages' writes count them) and widens the times of
	// those it knows to the earlier CreatedAt and the later LastActive
	// (an agent keeps the times of messages deleted since).
	PutAgents(ctx context.Context, as []Agent) error
}

// PartCounts counts what a TransferStore holds of each part.
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

// CursorRow is one read cursor as stored (Scope as in CursorStore).
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

// QuotaStore lets GC keep a Backend within gc.max_bytes, with the plan of
// a data dir: the oldest sessions, then the oldest messages (never pinned
// ones, decisions or policies), until the estimated size fits.
// RetentionStore.Size is the size the quota compares.
type QuotaStore interface {
	// QuotaSessions returns every session, least recently active first
	// (last_at, then id), with the length (in characters, as the data
	// dir's estimate counts) of the contents it references.
	QuotaSessions(ctx context.Context) ([]QuotaSession, error)
	// QuotaMessages returns the messages the quota may delete (not
	// decisions, policies or pinned), oldest first (created_at, then id),
	// with the length of their content and metadata in characters.
	QuotaMessages(ctx context.Context) ([]QuotaMessage, error)
	// Compact gives the space of deleted rows back, so that Size drops
	// by what was deleted.
	Compact(ctx context.Context) error
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

// SearchCountStore keeps the search counts of every process sharing a
// Backend, for StoreStats. A process adds its pending counts after one of
// its writes (at most every searchFlushInterval, or once
// searchFlushEvery searches are pending) and at Close, as the data dir's
// processes do: a search alone writes nothing.
type SearchCountStore interface {
	// AddSearches adds n searches that took us microseconds in all.
	AddSearches(ctx context.Context, n, us int64) error
	// SearchTotals returns the searches added so far and their time.
	SearchTotals(ctx context.Context) (n, us int64, err error)
}
