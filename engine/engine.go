package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/engine/redact"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/cairn-dev/cairn/fts"
)

// DefaultMaxContentBytes is the content limit when Options.MaxContentBytes is 0.
const DefaultMaxContentBytes = 1 << 20

// DBFile is the SQLite file's name inside the data dir.
const DBFile = "cairn.db"

// Options configure an Engine. The zero value means defaults.
type Options struct {
	// MaxContentBytes is the largest message content accepted, in bytes;
	// 0 means DefaultMaxContentBytes (1 MiB).
	MaxContentBytes int
	// BusyTimeout is how long a statement waits for another process's lock;
	// 0 means 5 s.
	BusyTimeout time.Duration
	// ReadConns is the size of the read connection pool; 0 means 4.
	ReadConns int
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
	// VectorStore configures the vector store (DIR/vectors), which
	// VectorStore hands out.
	VectorStore VectorStoreOptions
	// EmbedContext is what is embedded with each message's content ("" =
	// EmbedContent). Vectors already stored keep the text they were made
	// from: changing it calls for a rebuild.
	EmbedContext EmbedContext
	// ReadOnly says the caller only reads (a one-shot search, show, stats
	// or check). Open then skips its write check, and when SQLite cannot
	// set up its shared-memory index (a full disk, a read-only medium) it
	// falls back to one connection that keeps the index in its own memory
	// under an exclusive lock held until Close: reads work, and writers in
	// other processes wait for this one. Writes through such an engine
	// fail (ErrDiskFull when the disk is full).
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

// VectorStoreOptions configures the engine's vector store. The zero value
// opens it only when an embedder or a vector set needs it.
type VectorStoreOptions struct {
	// Open opens the store even when neither an embedder nor a vector set
	// needs it, for a process that serves collections (cairn serve's Chroma
	// API) besides messages.
	Open bool
	// AllowReset enables the store's Reset (Chroma's allow_reset), which
	// deletes every collection but the engine's message vectors (database
	// VectorDatabase).
	AllowReset bool
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

func (o Options) withDefaults() (Options, error) {
	if o.MaxContentBytes < 0 {
		return o, invalid("Options.MaxContentBytes", "must be >= 0, got %d", o.MaxContentBytes)
	}
	if o.MaxContentBytes == 0 {
		o.MaxContentBytes = DefaultMaxContentBytes
	}
	if o.BusyTimeout < 0 {
		return o, invalid("Options.BusyTimeout", "must be >= 0, got %s", o.BusyTimeout)
	}
	if o.BreadcrumbRepo != "" {
		if err := checkRepo("Options.BreadcrumbRepo", o.BreadcrumbRepo); err != nil {
			return o, err
		}
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.ReadConns < 0 {
		return o, invalid("Options.ReadConns", "must be >= 0, got %d", o.ReadConns)
	}
	if o.ReadConns == 0 {
		o.ReadConns = 4
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

// Engine is an open data dir. Use Open to get one and Close when done.
type Engine struct {
	*db
	fts *fts.Table

	sessions  *Sessions
	retention *Retention
	backups   *Backups

	vec *vectors // vecstore and its collections (engine/sqlite_vecstore.go)

	kw *memKeywordIndex // in-memory keyword index, fts.Index (engine/sqlite_keyword_index.go)

	searches searchCounter // this process's searches not yet stored (engine/searchstats.go)

	// store is the storage boundary every shared operation goes through:
	// the data dir's sqliteStore (engine/sqlite_store.go) or the Store
	// OpenBackend took.
	store Store

	// leftovers are the temporaries of killed backups and restores Open
	// removed (RemovedLeftovers).
	leftovers []string

	worker vectorWorker // fills the store's vectors (engine/worker.go)
	// ownVectorStore: e.vec.store is DIR/vectors opened beside a store
	// that keeps its vectors elsewhere (OpenBackend), closed by the Engine.
	ownVectorStore bool
}

// Open opens (creating if needed) the data dir dir and its database,
// applying pending migrations. It fails with ErrIncompatibleFormat for a
// database from a newer cairn or another application, ErrCorrupt for a file
// that is not a readable SQLite database, and a plain error naming the path
// when dir cannot be created or written.
func Open(ctx context.Context, dir string, opts Options) (*Engine, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if dir == "" {
		return nil, invalid("data dir", "must not be empty")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("engine: data dir %q: %w", dir, err)
	}
	// Private by default: the dir 0700 and every file in it 0600 (a
	// stricter umask narrows these further). A dir that exists keeps the
	// mode its owner gave it; `cairn check` warns when others can read it.
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("engine: cannot create data dir: %w", classify(err))
	}
	var leftovers []string
	if !opts.ReadOnly {
		if err := checkWritable(abs); err != nil {
			return nil, err
		}
		// Plaintext copies killed backups and restores left (engine/leftovers.go).
		leftovers = append(removeBackupStages(abs), removeStaleIn(filepath.Dir(abs), restoreTempPrefix(abs))...)
	}
	t, err := fts.New("messages_fts", "messages", "content", "id")
	if err != nil {
		return nil, err
	}
	e := &Engine{db: &db{dir: abs, opts: opts}, fts: t, kw: newMemKeywordIndex(t), leftovers: leftovers}
	e.vec = &vectors{}
	e.vec.mu.colls = map[string]string{}
	e.store = &sqliteStore{db: e.db, fts: t, kw: e.kw, vec: e.vec, searches: &e.searches,
		wakeVectors: e.wakeVectors, validAmong: e.validAmong, convertVectors: e.ConvertVectors, msgs: e}
	e.worker.wake = make(chan struct{}, 1)
	e.sessions = &Sessions{db: e.db, msgs: e, over: e}
	e.retention = &Retention{db: e.db, fts: t, msgs: e, over: e}
	e.backups = &Backups{db: e.db, store: e.VectorStore}
	path := filepath.Join(abs, DBFile)
	if opts.ReadOnly && !Writable(abs) {
		// Another user's data dir, or one made read-only: SQLite cannot
		// create the WAL's shared-memory file beside the database, so it
		// reads the file as immutable, on one connection.
		if err := e.openSQLiteImmutable(ctx, path); err != nil {
			return nil, err
		}
		if err := e.startVectors(ctx); err != nil {
			e.w.Close()
			return nil, err
		}
		return e, nil
	}
	// SQLite would create the file 0644; created here first, it is 0600,
	// and SQLite gives the WAL and shared-memory files the same mode.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("engine: create %s: %w", DBFile, classify(err))
	}

	if err := e.openSQLiteShared(ctx, path); err != nil {
		if !noSharedMemory(err) {
			return nil, err
		}
		if !opts.ReadOnly {
			if diskNearlyFull(abs) && !errors.Is(err, ErrDiskFull) {
				err = fmt.Errorf("%w: %w", ErrDiskFull, err)
			}
			return nil, err
		}
		opts.Logger.Warn("SQLite cannot set up its shared-memory index (disk full?); reading with an exclusive lock", "err", err)
		if err := e.openSQLite(ctx, path, true); err != nil {
			return nil, err
		}
	}
	if err := e.startVectors(ctx); err != nil { // engine/worker.go
		e.r.Close()
		e.w.Close()
		return nil, err
	}
	return e, nil
}

// RemovedLeftovers returns the temporary files and folders of killed
// backups and restores that Open removed: the data dir's backup stages,
// the archive temporaries they named, and ".DIR.restore-*" beside it.
func (e *Engine) RemovedLeftovers() []string { return e.leftovers }

func checkWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".cairn-write-check-*")
	if err != nil {
		return fmt.Errorf("engine: data dir %s is not writable: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("engine: data dir %s: %w", dir, err)
	}
	return nil
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
	err := e.store.Close()
	if e.ownVectorStore {
		if verr := e.vec.store.Close(); err == nil {
			err = verr
		}
	}
	return err
}

// Sessions returns the imported sessions: import, reads and export. On a
// Store without them every method refuses (*InvalidError on store).
func (e *Engine) Sessions() *Sessions {
	if e.sessions == nil {
		return &Sessions{db: e.db, msgs: e, over: e}
	}
	return e.sessions
}

// Retention returns garbage collection by retention policy. On a Store
// every method refuses (*InvalidError on store).
func (e *Engine) Retention() *Retention {
	if e.retention == nil {
		return &Retention{db: e.db, msgs: e, over: e}
	}
	return e.retention
}

// Backups returns backups of the data dir. On a Store, Create refuses
// and names the store's own tools.
func (e *Engine) Backups() *Backups {
	if e.backups == nil {
		return &Backups{db: e.db, store: e.VectorStore}
	}
	return e.backups
}
