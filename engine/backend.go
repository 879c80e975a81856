package engine

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn/vecstore/where"
)

// Backend is a message store other than the data dir's SQLite database
// (package pgstore: PostgreSQL with pgvector), opened with OpenBackend.
// It is the storage boundary: it keeps messages, channels, agents, the
// keyword statistics, vectors and the vector outbox, and answers filtered
// candidate retrieval for each side of a search. Everything above it is
// the Engine's one copy: validation and normalization of writes (prepare),
// search planning and filters (plan, resolveFilter), query shape, fusion,
// ranking profiles, results, and embedding (the Engine embeds; the
// Backend stores vectors).
//
// Filters reach a Backend as the normalized where expression over the
// vector metadata keys (WhereKeys): one expression holds every Filter
// field except UnreadBy and BreadcrumbsValid, which a Backend engine
// refuses as bad input. Scores are BM25 (as fts.Index computes it: k1 1.2,
// b 0.75, idf floored at 1e-6) and cosine similarity.
//
// Implementations are safe for concurrent use by several processes on one
// store: writes are idempotent across processes and ids are never reused.
type Backend interface {
	// Write stores ms in one transaction, all or nothing. A message whose
	// (ContentHash, Channel, Sender) is stored already (or earlier in ms)
	// is not stored again: its id comes back with Created false. Every
	// write ensures the channel (and a project's channels), updates the
	// channel's count and last_message_at and the sender's agent row, and
	// queues the new message for every live vector set.
	Write(ctx context.Context, ms []StoredMessage, now time.Time) ([]WriteResult, error)
	// Messages returns the stored messages among ids, in any order.
	Messages(ctx context.Context, ids []int64) ([]Message, error)
	// List returns up to limit messages passing f (nil: all), newest
	// first, then (ListByConfidence) higher confidence, then larger id.
	List(ctx context.Context, f *where.Expr, limit int, order ListOrder) ([]Message, error)
	// Keyword returns the depth best BM25 hits of terms (stems) among the
	// messages passing f, best first, ties by smaller id.
	Keyword(ctx context.Context, terms []string, f *where.Expr, depth int) ([]ScoredID, error)
	// Nearest returns up to k messages passing f whose vectors in set are
	// nearest to q by cosine, nearest first; Score is the similarity.
	Nearest(ctx context.Context, set int64, q []float32, f *where.Expr, k int) ([]ScoredID, error)
	// Similarities returns the cosine similarity of q to the vectors in
	// set of those ids that have one.
	Similarities(ctx context.Context, set int64, q []float32, ids []int64) (map[int64]float64, error)
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
	// Senders returns which of names (lower-cased) name an agent, compared
	// lower-cased.
	Senders(ctx context.Context, names []string) (map[string]bool, error)
	// Sets returns the vector sets that are not retired, with their
	// Pending counts.
	Sets(ctx context.Context) ([]VectorSet, error)
	// CreateSet creates the active vector set of model (dim) and queues
	// every stored message for it, unless a live set exists: it then
	// returns that one.
	CreateSet(ctx context.Context, model string, dim int, now time.Time) (VectorSet, error)
	// Claim leases up to n queued messages of set for lease (no other
	// caller gets them until it runs out) and returns them.
	Claim(ctx context.Context, set int64, n int, lease time.Duration) ([]QueuedMessage, error)
	// PutVectors stores the vectors of claimed messages (vecs[i] of
	// ids[i]) in set and removes their outbox rows, in one transaction. A
	// message deleted since it was claimed is skipped.
	PutVectors(ctx context.Context, set int64, ids []int64, vecs [][]float32) error
	// Pending returns which of ids are still queued for set.
	Pending(ctx context.Context, set int64, ids []int64) (map[int64]bool, error)
	// Close releases the store's connections.
	Close() error
}

// ListOrder is the order of Backend.List: newest first, then larger id
// (ListByTime), or newest first, then higher confidence, then larger id
// (ListByConfidence, a filter-only search).
type ListOrder int

// List orders.
const (
	ListByTime ListOrder = iota
	ListByConfidence
)

// StoredMessage is a validated, normalized message as a Backend stores it.
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
		out[k] = v.kind
	}
	return out
}
