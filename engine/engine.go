package engine

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/engine/redact"
)

// DefaultMaxContentBytes is the content limit when Options.MaxContentBytes is 0.
const DefaultMaxContentBytes = 1 << 20

// Options configure an Engine. The zero value means defaults.
type Options struct {
	// MaxContentBytes is the largest message content accepted, in bytes;
	// 0 means DefaultMaxContentBytes (1 MiB).
	MaxContentBytes int
	// Now is the clock used for created_at and last_active; nil means
	// time.Now. Tests inject a fixed clock.
	Now func() time.Time
	// Logger receives operational messages; nil discards them.
	Logger *slog.Logger
	// Embedder computes message embeddings; nil means keyword search only.
	Embedder Embedder
	// NoVectorWorker keeps this engine from embedding queued messages in
	// the background. One-shot processes (a CLI search) set it, so that
	// they never stall on a backlog of thousands of messages; the messages
	// stay queued for a long-running process with the model (cairn serve,
	// cairn mcp) or for SyncVectors and Rebuild.
	NoVectorWorker bool
	// Redactor redacts secrets from message content before it is stored
	// (WriteResult.Redactions reports the counts); nil stores content as
	// given.
	Redactor *redact.Redactor
	// EmbedContext is what is embedded with each message's content ("" =
	// EmbedContent). Vectors already stored keep the text they were made
	// from: changing it calls for a rebuild.
	EmbedContext EmbedContext
	// ReadOnly says the caller only reads (a one-shot search, show, stats
	// or check): the store opens without writing, and falls back to what
	// still lets it read where it cannot write (the data dir's fallbacks:
	// engine/sqlite/doc.go); continuous export writes nothing. Writes
	// through such an engine may fail (ErrDiskFull when the disk is full).
	ReadOnly bool
	// QueryAnalysis switches off parts of how a search reads its query
	// (the zero value keeps them all; engine/queryshape.go).
	QueryAnalysis QueryAnalysis
	// BreadcrumbRepos reads the HEAD of the repositories breadcrumbs were
	// written in; searches and message reads attach each message's cached
	// marks at its repository's HEAD (engine/crumbmarks.go). nil reads no
	// repository: every one counts as unreachable and notes keep their
	// last marks.
	BreadcrumbRepos BreadcrumbRepos
	// BreadcrumbRepo is the top directory of the git repository this
	// process writes in: StoreMessage and WriteNote record it (metadata
	// breadcrumbs_repo) on messages with breadcrumbs that name none. ""
	// records nothing.
	BreadcrumbRepo string
	// NearDuplicateCosine, when in (0, 1], is the cosine at or above which
	// StoreMessage and WriteNote return an earlier message by the same
	// sender in the same channel instead of storing a new one
	// (engine/neardup.go; DefaultNearDuplicateCosine is the value chosen
	// on the dev data). 0 (the default) recognises exact duplicates only:
	// the check embeds a write that shares most of its words with an
	// earlier one in the write itself, which at 100,000 messages of
	// repetitive text took the dual-write p95 from 5 to 80-150 ms (make
	// bench-gate). Needs an Embedder.
	NearDuplicateCosine float64
	// Observer sees every committed write (engine/commits.go); nil
	// observes nothing.
	Observer CommitObserver
}

// Embedder turns texts into vectors. embed.Model satisfies it.
type Embedder interface {
	// Embed returns one vector of Dim() floats per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dim is the vectors' dimension.
	Dim() int
	// ModelID names the model and its version; vectors made by different
	// model ids are never mixed.
	ModelID() string
}

// WithDefaults checks o and fills in the defaults of its zero fields; every
// store opener and OpenBackend call it first, so bad options fail alike.
func (o Options) WithDefaults() (Options, error) {
	if o.MaxContentBytes < 0 {
		return o, invalid("Options.MaxContentBytes", "must be >= 0, got %d", o.MaxContentBytes)
	}
	if o.MaxContentBytes == 0 {
		o.MaxContentBytes = DefaultMaxContentBytes
	}
	if o.BreadcrumbRepo != "" {
		if err := checkRepo("Options.BreadcrumbRepo", o.BreadcrumbRepo); err != nil {
			return o, err
		}
	}
	if err := o.EmbedContext.check(); err != nil {
		return o, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// Engine is cairn over one store: the data dir's (package engine/sqlite,
// sqlite.OpenEngine) or another (engine/postgres). Use OpenBackend to get
// one over a Store and Close when done.
type Engine struct {
	// dir is the data dir that holds config.toml and the models ("": none).
	dir  string
	opts Options
	// backend names a store other than the data dir's ("": the data dir).
	backend string

	// mu guards every operation against Close (enterStore).
	mu struct {
		sync.RWMutex
		closed bool
	}

	searches SearchCounts // this process's searches not yet stored (engine/searchstats.go)

	// store is the storage boundary every operation goes through: the
	// Store OpenBackend took.
	store Store

	worker vectorWorker // fills the store's vectors (engine/worker.go)
}

// Dir returns the data dir's absolute path.
func (e *Engine) Dir() string { return e.dir }

// Close closes the database. It is safe to call more than once; calls after
// the first return nil. Operations after Close fail with ErrClosed.
func (e *Engine) Close() error {
	e.closeObserver() // before the store closes: it reads the messages
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mu.closed {
		return nil
	}
	e.mu.closed = true
	e.stopVectors()
	e.flushSearchesBeforeClose(context.Background())
	return e.store.Close()
}
