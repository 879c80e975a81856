package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/engine/redact"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/fts"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
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
	// ContinuousExport re-exports the channels each committed write
	// changes (engine/export_continuous.go); the zero value is off.
	ContinuousExport ContinuousExport
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

	vec *vectors // vector sets, vecstore and the outbox worker (engine/vectors.go)

	kw *memKeywordIndex // in-memory keyword index, fts.Index (engine/keyword_index.go)

	searches searchCounter // this process's searches not yet stored (engine/searchstats.go)

	// store is the storage boundary every shared operation goes through:
	// the data dir's embeddedStore (engine/embedded.go) or the Store
	// OpenBackend took.
	store Store

	// leftovers are the temporaries of killed backups and restores Open
	// removed (RemovedLeftovers).
	leftovers []string

	worker vectorWorker // fills the store's vectors (engine/vectors.go)
	// ownVectorStore: e.vec.store is DIR/vectors opened beside a store
	// that keeps its vectors elsewhere (OpenBackend), closed by the Engine.
	ownVectorStore bool

	// export is the continuous export observer (engine/export_continuous.go),
	// made on first use.
	exportOnce sync.Once
	export     *exporter
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
	e.store = embeddedStore{e}
	e.worker.wake = make(chan struct{}, 1)
	e.sessions = &Sessions{db: e.db, msgs: e, over: e}
	e.retention = &Retention{db: e.db, fts: t, msgs: e, over: e}
	e.backups = &Backups{db: e.db, store: e.VectorStore}
	path := filepath.Join(abs, DBFile)
	if opts.ReadOnly && !writable(abs) {
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
	if err := e.startVectors(ctx); err != nil { // engine/vectors.go
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

// openSQLite opens the writer connection and the reader pool, applying
// pending migrations. private is the ReadOnly fallback: one exclusive
// connection, serving as writer and reader pool both, whose WAL index
// lives in its own heap memory instead of the -shm file.
func (e *Engine) openSQLite(ctx context.Context, path string, private bool) error {
	opts := e.opts
	var err error
	if private {
		e.w, err = sql.Open("sqlite", privateDSN(path, opts))
	} else {
		e.w, err = sql.Open("sqlite", dsn(path, opts, false))
	}
	if err != nil {
		return fmt.Errorf("engine: open %s: %w", path, err)
	}
	e.w.SetMaxOpenConns(1)
	e.w.SetMaxIdleConns(1)
	e.w.SetConnMaxLifetime(0)
	e.w.SetConnMaxIdleTime(0)
	if err := e.migrate(ctx, path); err != nil {
		e.w.Close()
		return err
	}
	if private {
		e.r = e.w
		e.sharedConn = true
		return nil
	}
	e.r, err = sql.Open("sqlite", dsn(path, opts, true))
	if err != nil {
		e.w.Close()
		return fmt.Errorf("engine: open %s: %w", path, err)
	}
	e.r.SetMaxOpenConns(opts.ReadConns)
	e.r.SetMaxIdleConns(opts.ReadConns)
	e.r.SetConnMaxIdleTime(0)
	e.r.SetConnMaxLifetime(0)
	if err := e.r.PingContext(ctx); err != nil {
		e.r.Close()
		e.w.Close()
		return fmt.Errorf("engine: open %s: %w", path, classify(err))
	}
	return nil
}

// openSQLiteShared is openSQLite in WAL mode, tried again while other
// processes opening the same new database hold the lock that a
// connection's setup needs: switching a new database to WAL needs an
// exclusive lock, and SQLite answers SQLITE_BUSY there without calling
// its busy handler (waiting could deadlock two openers), so processes
// that create one data dir at the same moment could fail to open it. Each
// try closes what it opened; the tries stop once BusyTimeout has passed.
func (e *Engine) openSQLiteShared(ctx context.Context, path string) error {
	deadline := time.Now().Add(e.opts.BusyTimeout)
	for wait := 2 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := e.openSQLite(ctx, path, false)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// noSharedMemory reports whether err is SQLite failing to create or grow
// its -shm file (SQLITE_IOERR_SHMOPEN, _SHMSIZE), or to write at all.
func noSharedMemory(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return errors.Is(err, ErrDiskFull)
	}
	switch se.Code() {
	case sqlite3.SQLITE_IOERR_SHMOPEN, sqlite3.SQLITE_IOERR_SHMSIZE, sqlite3.SQLITE_IOERR_SHMMAP, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN:
		return true
	}
	return false
}

// openSQLiteImmutable opens the database of a data dir this process
// cannot write, for reading: one connection (writer and reader pool both)
// that opens the file read-only and immutable, since the shared-memory
// file WAL readers need cannot be created. A write-ahead log with frames
// in it would be ignored that way (its commits unseen), so it is refused,
// as is a database that needs a migration.
func (e *Engine) openSQLiteImmutable(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("engine: data dir %s: %w", e.dir, classify(err))
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return fmt.Errorf("engine: data dir %s is not writable and %s-wal holds commits not yet in %s: open it once with write access (any cairn command as its owner)", e.dir, DBFile, DBFile)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Set("immutable", "1")
	q.Add("_pragma", "query_only(1)")
	q.Add("_pragma", "temp_store(memory)")
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: filepath.ToSlash(path)}).EscapedPath(), RawQuery: q.Encode()}
	w, err := sql.Open("sqlite", u.String())
	if err != nil {
		return fmt.Errorf("engine: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	e.w, e.r, e.sharedConn, e.immutable = w, w, true, true
	if err := e.migrate(ctx, path); err != nil {
		w.Close()
		if errors.Is(err, ErrIncompatibleFormat) || errors.Is(err, ErrCorrupt) {
			return err
		}
		return fmt.Errorf("engine: data dir %s is not writable and its database needs an upgrade first (open it once with write access): %w", e.dir, err)
	}
	return nil
}

// privateDSN is the ReadOnly fallback's connection: locking_mode
// EXCLUSIVE before the first access makes SQLite keep the WAL index in
// heap memory, so it needs no -shm file (sqlite.org/wal.html#noshm).
func privateDSN(path string, opts Options) string {
	q := url.Values{}
	q.Add("_pragma", "locking_mode(exclusive)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "temp_store(memory)")
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: filepath.ToSlash(path)}).EscapedPath(), RawQuery: q.Encode()}
	return u.String()
}

func dsn(path string, opts Options, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(wal)")
	q.Add("_pragma", "foreign_keys(1)")
	// synchronous=FULL: a commit returns only once its WAL frames are on
	// disk, so an acknowledged write survives power loss, not only a crash
	// of the process (NORMAL's promise). Batches make the fsync cheap.
	q.Add("_pragma", "synchronous(full)")
	// Statement journals (every INSERT in a transaction may need one) in
	// memory rather than in temporary files: a batch of 1,000 messages
	// otherwise spends a sixth of its time in their write syscalls.
	q.Add("_pragma", "temp_store(memory)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
		// secure_delete: SQLite overwrites deleted rows and freed pages with
		// zeros, so a deleted message's text leaves the database file when
		// the WAL is checkpointed (scrubDeleted) rather than lingering in
		// page slack until a VACUUM.
		q.Add("_pragma", "secure_delete(1)")
		// The writer walks the messages, FTS5 and index b-trees on every
		// batch; 64 MiB of page cache (SQLite's default is 2 MiB) keeps
		// their inner pages out of read syscalls.
		q.Add("_pragma", "cache_size(-65536)")
	}
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: filepath.ToSlash(path)}).EscapedPath(), RawQuery: q.Encode()}
	return u.String()
}

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

// classify wraps SQLite errors that mean a damaged or foreign file as
// ErrCorrupt and a full disk (SQLITE_FULL, ENOSPC) as ErrDiskFull, keeping
// the cause.
func classify(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		case sqlite3.SQLITE_FULL:
			return fmt.Errorf("%w: %w", ErrDiskFull, err)
		}
		if se.Code() == sqlite3.SQLITE_IOERR_SHMSIZE {
			return fmt.Errorf("%w: %w", ErrDiskFull, err)
		}
	}
	if errors.Is(err, syscall.ENOSPC) && !errors.Is(err, ErrDiskFull) {
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	}
	return err
}

// Dir returns the data dir's absolute path.
func (e *Engine) Dir() string { return e.dir }

// Close closes the database. It is safe to call more than once; calls after
// the first return nil. Operations after Close fail with ErrClosed.
func (e *Engine) Close() error {
	e.finishExport() // before the store closes: it reads the messages
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
