package engine

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn/fts"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// Store is the storage boundary of an Engine: the one port every store
// implements in full. It has two implementations: the data dir's embedded
// store (SQLite, FTS5 with the in-memory BM25 index, vecstore;
// package engine/sqlite), and PostgreSQL with pgvector (package
// engine/postgres); OpenBackend builds an Engine over either. A
// Store keeps messages, channels, agents, the keyword statistics, vectors
// and the vector outbox, read cursors and breadcrumb marks, and answers
// filtered candidate retrieval for each side of a search. Everything above
// it is the Engine's one copy for both: validation and normalization of
// writes (prepare), search planning and filters (plan, resolveFilter),
// query shape, fusion, reply lift, ranking profiles, results and
// snippets, and embedding (the Engine embeds; the Store stores vectors).
//
// Filters reach a Store as a Selection: the normalized where expression
// over the vector metadata keys (WhereKeys), and the read cursors
// (UnreadBy) and breadcrumb marks (ValidAt) conditions, which every
// Store's List, Keyword, Nearest and Replies honour. Scores are BM25 (as
// fts.Index computes it: k1 1.2, b 0.75, idf floored at 1e-6) and cosine
// similarity.
//
// Its methods are grouped by concern into the interfaces it embeds:
// MessageStore (messages, channels, agents), SearchStore (the reads of a
// search), VectorSetStore (vector sets, the outbox, rebuild), CursorStore
// (read cursors and breadcrumb marks), SessionStore (imported sessions),
// MaintenanceStore (stats, checks, retention, quota) and TransferStore
// (the parts cairn migrate copies). The groups name parts of one port,
// not options: there are no optional parts, and a store that lacks an
// operation does not compile. Validation stays in the Engine's method,
// before the Store is asked.
//
// Implementations are safe for concurrent use by several processes on one
// store: writes are idempotent across processes and ids are never reused.
type Store interface {
	MessageStore
	SearchStore
	VectorSetStore
	CursorStore
	SessionStore
	MaintenanceStore
	TransferStore

	// Attach keeps what the Engine running over the store lends it; the
	// Engine calls it once, before any other method but Close.
	Attach(h Host)
	// Close releases the store's connections.
	Close() error
}

// Host is what an Engine lends the store it runs over (Store.Attach): a
// store that counts searches inside its own write transactions takes
// them from Searches, and one that queues vectors in its writes calls
// Wake after the commit so that the Engine's worker fills them now
// rather than at its next round (every second).
type Host struct {
	// Wake tells the Engine's vector worker that outbox rows wait.
	Wake func()
	// Searches are this process's searches not yet stored.
	Searches *SearchCounts
}

// MessageStore is the message side of a Store: writing and deleting
// messages, reading them by id, in id order or by a Selection, and the
// channels and agents the writes keep.
type MessageStore interface {
	// Write stores ms in one transaction, all or nothing. A message whose
	// (ContentHash, Channel, Sender) is stored already (or earlier in ms)
	// is not stored again: its id comes back with Created false. Every
	// write ensures the channel (and a project's channels), updates the
	// channel's count and last_message_at and the sender's agent row, and
	// queues the new message for every live vector set.
	Write(ctx context.Context, ms []StoredMessage, now time.Time) ([]WriteResult, error)
	// Messages returns the stored messages among ids, in any order.
	Messages(ctx context.Context, ids []int64) ([]Message, error)
	// List returns up to limit messages passing f, newest first, then
	// (ListByConfidence) higher confidence, then larger id.
	List(ctx context.Context, f Selection, limit int, order ListOrder) ([]Message, error)
	// Delete deletes the message with id, its keyword entry and its
	// vectors, updating the channel and agent counts; false when no such
	// message exists.
	Delete(ctx context.Context, id int64) (bool, error)
	// Agents returns the agents, ordered by name then project; with
	// project != "" only that project's.
	Agents(ctx context.Context, project string) ([]Agent, error)
	// After returns up to limit messages with ids above after, in id order.
	After(ctx context.Context, after int64, limit int) ([]Message, error)
	// Count returns the number of stored messages.
	Count(ctx context.Context) (int64, error)
	// Channels returns every channel, by id.
	Channels(ctx context.Context) ([]Channel, error)
	// Channel returns the channel id; false when there is none.
	Channel(ctx context.Context, id string) (Channel, bool, error)
	// Senders returns which of names (lower-cased) name an agent, compared
	// lower-cased.
	Senders(ctx context.Context, names []string) (map[string]bool, error)
	// CreateChannel inserts c, a plain channel, and the channels of its
	// project (c.ProjectID != "") as a first write does; false when the id
	// is taken (nothing is changed then).
	CreateChannel(ctx context.Context, c Channel) (bool, error)
	// ChannelMessageIDs returns the ids of a channel's messages in id
	// order.
	ChannelMessageIDs(ctx context.Context, channel string) ([]int64, error)
	// ChannelNeighbours returns up to before older and after newer
	// messages of id's channel, ordered by (created_at, id); ErrNotFound
	// when there is no message id (Engine.Neighbours).
	ChannelNeighbours(ctx context.Context, id int64, before, after int) (Neighbours, error)
}

// SearchStore is what a search reads of a Store beyond whole messages:
// the candidates of each side (BM25 hits, nearest vectors), similarities
// and vectors of given messages, the facts ranking weighs, and the
// replies and neighbours that lift or frame a hit. Every read honours
// its Selection.
type SearchStore interface {
	// Keyword returns the depth best BM25 hits of q among the messages
	// passing f, best first, ties by smaller id, the query that ranked
	// them (q, or q without terms the store left out; the snippets mark
	// its terms) and that query's mass (fts.QueryMass over all the
	// store's messages), which makes a hit's score an absolute measure.
	Keyword(ctx context.Context, q fts.Query, f Selection, depth int) (KeywordHits, error)
	// Nearest returns up to k messages passing f whose vectors in set are
	// nearest to q by cosine, nearest first; Score is the similarity.
	Nearest(ctx context.Context, set VectorSet, q []float32, f Selection, k int) ([]ScoredID, error)
	// Similarities returns the cosine similarity of q to the vectors in
	// set of those ids that have one.
	Similarities(ctx context.Context, set VectorSet, q []float32, ids []int64) (map[int64]float64, error)
	// SetVectors returns the vectors in set of those of ids that have one.
	SetVectors(ctx context.Context, set VectorSet, ids []int64) (map[int64][]float32, error)
	// Replies returns, for those of askers whose content holds a question
	// mark, the next message of the same channel (by created_at, then id)
	// when it is from another sender, at most within later, and passes f
	// (engine/replies.go). An asker without such a reply is left out.
	Replies(ctx context.Context, askers []int64, within time.Duration, f Selection) ([]Reply, error)
	// RankFacts reads what ranking needs of the messages among ids (ID,
	// SenderID, Confidence, CreatedAt, SupersededBy), in any order; a
	// store may return whole messages.
	RankFacts(ctx context.Context, ids []int64) ([]Message, error)
	// Neighbours returns, for those of ids that have one, the message
	// just before and just after each in its channel (by created_at,
	// then id) when it is from another sender and at most within away,
	// and whether the one after passes f (engine/turncontext.go).
	Neighbours(ctx context.Context, ids []int64, within time.Duration, f Selection) (map[int64]TurnNeighbours, error)
}

// VectorSetStore is the vector side of a Store (the messages' vector
// sets, not the collections of a data dir's vector store) and the rebuild of
// what is derived from the messages. Each store fills its vectors from its outbox
// with the Engine's Vectorizer; the Engine runs the one background worker
// (PrepareVectors once, then FillVectors after each local write and every
// second) and Rebuild (RebuildKeywords, RebuildTarget, SyncVectors,
// FinishRebuild).
type VectorSetStore interface {
	// Sets returns the vector sets that are not retired, active first,
	// each with Pending: its messages still queued for a vector.
	Sets(ctx context.Context) ([]VectorSet, error)
	// Pending returns which of ids are still queued for set.
	Pending(ctx context.Context, set int64, ids []int64) (map[int64]bool, error)
	// AllSets returns every vector set the store keeps, each with all its
	// outbox rows (deletions included): the retired sets too on a store
	// that keeps them (the data dir's), else the live ones as Sets.
	AllSets(ctx context.Context) ([]VectorSet, error)
	// Vectors returns the vectors in set of those ids that have one.
	Vectors(ctx context.Context, set int64, ids []int64) (map[int64][]float32, error)
	// OpenVectors readies the vectors of v's model: the store creates
	// the model's set when it needs one and checks its dimension
	// (ErrDimensionMismatch). fills reports whether FillVectors may have
	// work, so that the Engine starts its worker.
	OpenVectors(ctx context.Context, v Vectorizer) (fills bool, err error)
	// PrepareVectors runs when the worker starts, before it fills (the
	// data dir converts vectors kept in an older code).
	PrepareVectors(ctx context.Context) error
	// FillVectors does up to n outbox rows of the work this process can
	// do (embedding queued messages, removing vectors of deleted ones,
	// switching to a complete building set) and returns how many it did.
	FillVectors(ctx context.Context, n int) (int, error)
	// SyncVectors does the work this process can do until none is left,
	// waiting for rows other processes hold; progress, if not nil, is
	// called after each batch.
	SyncVectors(ctx context.Context, progress func(Progress)) error
	// RebuildKeywords recomputes every message's keyword entry and the
	// BM25 totals from the contents, in one transaction writers wait for.
	RebuildKeywords(ctx context.Context) error
	// RebuildTarget returns the set a rebuild fills with the
	// Vectorizer's model: one of that model still being filled (resumed
	// true), else a new building set with every message queued for it.
	RebuildTarget(ctx context.Context) (set VectorSet, resumed bool, err error)
	// FinishRebuild makes the filled target the active set, retiring the
	// others, and returns it; an error when it is not complete (another
	// process holds part of its work).
	FinishRebuild(ctx context.Context, target VectorSet) (VectorSet, error)
}

// CursorStore keeps what an agent has seen of the messages: its read
// cursors (Unread, MarkRead, the unread_by filter) and the cache of
// breadcrumb checks (the breadcrumbs_valid filter, engine/crumbmarks.go).
// A cursor's scope is one of CursorScope's keys: "" (every channel),
// "channel:ID", "project:P".
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

	// PutMarks stores each message's row (repository, head, marks JSON
	// and worst state), replacing what was cached of it; ids of deleted
	// messages are skipped.
	PutMarks(ctx context.Context, marks map[int64]MarkRow) error
	// MessagesToMark returns up to limit messages with breadcrumbs and
	// an id above after that belong to repo and have no marks at head, in
	// id order (ops.MessagesToMark says which belong).
	MessagesToMark(ctx context.Context, repo, head string, after int64, limit int) ([]Message, error)
	// Marks returns the cached rows of those of ids that have one.
	Marks(ctx context.Context, ids []int64) (map[int64]MarkRow, error)
	// MarkedRepos returns the repositories the cache holds marks of.
	MarkedRepos(ctx context.Context) ([]string, error)
	// BreadcrumbMessages returns up to limit messages that have
	// breadcrumbs and an id above after, in id order
	// (ops.MessagesWithBreadcrumbs).
	BreadcrumbMessages(ctx context.Context, after int64, limit int) ([]Message, error)
}

// SessionStore keeps imported Claude Code sessions: the import
// (ingest.ImportSessions) does the reading and chunking, writing through a SessionTx and the
// store's message write, one transaction per file; the reads list
// sessions, their records and the records holding a chunk, and purge
// deletes sessions through it.
type SessionStore interface {
	// ImportSessions runs fn in one transaction (all of it or nothing),
	// with write storing messages in that transaction as Write does. It
	// may run fn again when the store retries the transaction. Once it
	// committed a new message it wakes the Engine's vector worker
	// (Host.Wake), as the Engine does after Write.
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
	// (as DeleteMessages does) in one transaction.
	DeleteSessions(ctx context.Context, sessions, contents []string, messages []int64) error
	// ForgetSessionFiles deletes where the import of the sessions' files
	// stopped (see forgetSessionFilesSQL), for purge.
	ForgetSessionFiles(ctx context.Context, sessions []string) error
}

// MaintenanceStore is what the store's upkeep reads and does: counts and
// checks (ops.StoreStats, Timeline, ops.Consistency, ops.Check), the search totals,
// and retention (ops.GC, ops.Purge) and the size quota (gc.max_bytes),
// which engine/ops plans by its policies over these facts, the same for
// every store, while the store deletes and gives the space back.
type MaintenanceStore interface {
	// Stats counts what the store holds.
	Stats(ctx context.Context) (BackendStats, error)
	// TimelineCounts counts the messages created in [start, end) (Unix
	// ms) per channel type and bucket (created_at - start) / width.
	TimelineCounts(ctx context.Context, start, width, end int64) ([]TimelineCount, error)
	// Consistency fills a CheckReport: Messages, FTSRows (messages whose
	// keyword entry matches their terms), FTSMissing/FTSExtra,
	// FTSIntegrity ("ok" or what differs in the keyword statistics), one
	// SetCheck per live vector set, Warnings about the store's files, and
	// Problems in words (counters of channels and agents included). The
	// Engine adds Embedder and Parts.
	Consistency(ctx context.Context) (CheckReport, error)
	// Integrity returns the problems the store's own checks of its files
	// find beyond Consistency: the data dir's SQLite quick_check, foreign
	// keys, channel counters and FTS5 integrity check; none on PostgreSQL,
	// whose Consistency compares its counters.
	Integrity(ctx context.Context) ([]string, error)
	// AddSearches adds n searches that took us microseconds in all to the
	// totals every process sharing the store reads: at once, or with the
	// store's next write or Close (the data dir: no commit of its own). A
	// process adds its pending counts after one of its writes (at most
	// every searchFlushInterval, or once searchFlushEvery searches are
	// pending) and at Close: a search alone writes nothing.
	AddSearches(ctx context.Context, n, us int64) error
	// SearchTotals returns the searches added so far and their time.
	SearchTotals(ctx context.Context) (n, us int64, err error)

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
	// Reclaim lets the store reuse the space of deleted rows.
	Reclaim(ctx context.Context) error
	// Size is the store's size in bytes.
	Size(ctx context.Context) (int64, error)
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
	// Backup writes a consistent snapshot of the store to the file
	// archive (ops.Backup).
	Backup(ctx context.Context, archive string, opts BackupOptions) (*BackupManifest, error)
}

// TransferStore reads and writes, as stored, what a store holds besides
// messages and channels: imported sessions (records, contents with their
// chunks, where each file's import stopped), the agents, their read
// cursors and the breadcrumb marks cache. cairn migrate copies them
// between any two stores (ingest.TransferTo). Message ids are the store's own:
// the caller translates them between stores. Every Put is idempotent, so
// an interrupted copy resumes by running again.
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

// Selection is the filter of a Store read.
type Selection struct {
	// Where is the filter over the WhereColumns keys; nil keeps every
	// message.
	Where *where.Expr
	// UnreadBy keeps the messages this agent has not read.
	UnreadBy string
	// ValidAt, when set, keeps the messages whose breadcrumbs are all
	// valid at these HEADs of their repositories (RepoHeads.ValidNow);
	// the Engine has read the HEAD of every repository of MarkedRepos.
	ValidAt *RepoHeads
}

// PassingMarks returns which of ids pass sel's UnreadBy and ValidAt, the
// parts of a Selection served after a store's own filter: unread gives the
// ids among ids an agent has not read, valid those whose breadcrumbs hold
// at the heads, each from the store's own tables. A part sel does not set
// is not looked up.
func PassingMarks(ids []int64, sel Selection, unread func(agent string) (map[int64]bool, error), valid func(heads *RepoHeads) (map[int64]bool, error)) (map[int64]bool, error) {
	pass := make(map[int64]bool, len(ids))
	for _, id := range ids {
		pass[id] = true
	}
	keepOnly := func(keep map[int64]bool, err error) error {
		if err != nil {
			return err
		}
		for id := range pass {
			if !keep[id] {
				delete(pass, id)
			}
		}
		return nil
	}
	if sel.UnreadBy != "" {
		if err := keepOnly(unread(sel.UnreadBy)); err != nil {
			return nil, err
		}
	}
	if sel.ValidAt != nil {
		if err := keepOnly(valid(sel.ValidAt)); err != nil {
			return nil, err
		}
	}
	return pass, nil
}

// ValidMarks returns the ids of rows whose marks say every breadcrumb is
// valid at heads (RepoHeads.ValidNow): a store's answer to ValidAt from
// its cached rows (CursorStore.Marks).
func ValidMarks(rows map[int64]MarkRow, heads *RepoHeads) map[int64]bool {
	valid := make(map[int64]bool, len(rows))
	for id, r := range rows {
		if heads.ValidNow(r) {
			valid[id] = true
		}
	}
	return valid
}

// SelectWhere is the Selection of the messages passing w (nil: all).
func SelectWhere(w *where.Expr) Selection { return Selection{Where: w} }

// selection is f as a Store receives it.
func (f resolved) selection() Selection {
	return Selection{Where: f.where, UnreadBy: f.unreadBy, ValidAt: f.validAt}
}

// Reply is a message that answers the question of another (Asker).
type Reply struct {
	Asker, Reply int64
}

// Vectorizer is what a store fills its vectors with: the Engine's
// embedder (nil: none), what is embedded of a queued message, and the
// Engine's clock for the times of the sets it creates and switches.
type Vectorizer struct {
	Embedder Embedder
	Text     func(QueuedMessage) string
	Now      func() time.Time
}

// ListOrder is the order of Store.List: newest first, then larger id
// (ListByTime), or newest first, then higher confidence, then larger id
// (ListByConfidence, a filter-only search).
type ListOrder int

// List orders.
const (
	ListByTime ListOrder = iota
	ListByConfidence
)

// StoredMessage is a validated, normalized message as a Store stores it.
type StoredMessage struct {
	Channel     Channel // ID, ChannelType, Name, OwnerAgentName, OwnerAgentProjectID, ProjectID
	Sender      string
	Project     string
	Content     string
	ContentHash string
	Confidence  float64
	Type        string
	// Metadata is the JSON object, Mentions the JSON array of names.
	Metadata       string
	Mentions       string
	WordCount      int
	HasBreadcrumbs bool
	CreatedAt      time.Time
	// Supersedes is the id of the message this one replaces (0: none).
	// The store refuses, as an *InvalidError on supersedes, an id that
	// does not exist or is superseded already (CheckSupersedes).
	Supersedes int64
}

// KeywordHits is what Store.Keyword found.
type KeywordHits struct {
	// Hits are the BM25 hits, best first.
	Hits []ScoredID
	// Query is the query that ranked them.
	Query fts.Query
	// Mass is Query's fts.QueryMass: the BM25 score of a message of
	// average length holding each of its terms once.
	Mass float64
}

// ScoredID is one retrieval hit: a message id and its score.
type ScoredID struct {
	ID    int64
	Score float64
}

// QueuedMessage is a message claimed from a vector set's outbox, with what
// is embedded of it.
type QueuedMessage struct {
	ID        int64
	Content   string
	Sender    string
	CreatedAt time.Time
}

// WhereColumns maps each where key to its column on a store's messages
// table and its kind; "channel_type" is the message's channel's type.
func WhereColumns() map[string]where.Kind {
	out := make(map[string]where.Kind, len(whereKeys))
	for k, v := range whereKeys {
		out[k] = v
	}
	return out
}
