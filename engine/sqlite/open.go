package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/fts"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Opening the data dir's SQLite database: the connections, their DSNs
// (pragmas on every pooled connection), the fallbacks for a full disk and
// a data dir this process cannot write, and the classes of SQLite's
// errors.

// DBFile is the SQLite file's name inside the data dir.
const DBFile = "cairn.db"

// Open opens (creating if needed) the data dir dir and its database,
// applying pending migrations. It fails with ErrIncompatibleFormat for a
// database from a newer cairn or another application, ErrCorrupt for a
// file that is not a readable SQLite database, and a plain error naming
// the path when dir cannot be created or written. opts are the Engine's
// (engine.Options.WithDefaults): the store reads its read-only setting,
// the logger and the clock; sopts are the data dir's own (its SQLite
// connections and vector store). Hand the store to engine.OpenBackend
// (OpenEngine does both), which owns it from then on.
func Open(ctx context.Context, dir string, opts engine.Options, sopts Options) (*Store, error) {
	opts, err := opts.WithDefaults()
	if err != nil {
		return nil, err
	}
	if sopts, err = sopts.withDefaults(); err != nil {
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
		// Plaintext copies killed backups and restores left (leftovers.go).
		leftovers = append(removeBackupStages(abs), removeStaleIn(filepath.Dir(abs), restoreTempPrefix(abs))...)
	}
	t, err := fts.New("messages_fts", "messages", "content", "id")
	if err != nil {
		return nil, err
	}
	s := &Store{dir: abs, opts: opts, storeOpts: sopts, fts: t, kw: newMemKeywordIndex(t), leftovers: leftovers,
		vec: &vectors{}, host: engine.Host{Wake: func() {}, Searches: &engine.SearchCounts{}},
		text: func(q engine.QueuedMessage) string { return q.Content }}
	s.vec.mu.colls = map[string]string{}
	path := filepath.Join(abs, DBFile)
	if opts.ReadOnly && !Writable(abs) {
		// Another user's data dir, or one made read-only: SQLite cannot
		// create the WAL's shared-memory file beside the database, so it
		// reads the file as immutable, on one connection.
		if err := s.openSQLiteImmutable(ctx, path); err != nil {
			return nil, err
		}
		return s, nil
	}
	// SQLite would create the file 0644; created here first, it is 0600,
	// and SQLite gives the WAL and shared-memory files the same mode.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("engine: create %s: %w", DBFile, classify(err))
	}

	if err := s.openSQLiteShared(ctx, path); err != nil {
		if !noSharedMemory(err) {
			return nil, err
		}
		if !opts.ReadOnly {
			if diskNearlyFull(abs) && !errors.Is(err, engine.ErrDiskFull) {
				err = fmt.Errorf("%w: %w", engine.ErrDiskFull, err)
			}
			return nil, err
		}
		opts.Logger.Warn("SQLite cannot set up its shared-memory index (disk full?); reading with an exclusive lock", "err", err)
		if err := s.openSQLite(ctx, path, true); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// OpenEngine opens the data dir dir (Open, with sopts) and an Engine over
// it (with opts), which owns the store: the Engine's Close closes it.
func OpenEngine(ctx context.Context, dir string, opts engine.Options, sopts Options) (*engine.Engine, error) {
	e, _, err := OpenEngineStore(ctx, dir, opts, sopts)
	return e, err
}

// OpenEngineStore is OpenEngine that also returns the store, for what
// only the data dir has (VectorStore, RemovedLeftovers, the keyword
// index's state). The Engine owns the store.
func OpenEngineStore(ctx context.Context, dir string, opts engine.Options, sopts Options) (*engine.Engine, *Store, error) {
	st, err := Open(ctx, dir, opts, sopts)
	if err != nil {
		return nil, nil, err
	}
	e, err := engine.OpenBackend(ctx, st, "", st.dir, opts)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return e, st, nil
}

// RemovedLeftovers returns the temporary files and folders of killed
// backups and restores that opening removed: the data dir's backup stages,
// the archive temporaries they named, and ".DIR.restore-*" beside it.
func (s *Store) RemovedLeftovers() []string { return s.leftovers }

// Dir returns the data dir's absolute path.
func (s *Store) Dir() string { return s.dir }

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

// openSQLite opens the writer connection and the reader pool, applying
// pending migrations. private is the ReadOnly fallback: one exclusive
// connection, serving as writer and reader pool both, whose WAL index
// lives in its own heap memory instead of the -shm file.
func (e *Store) openSQLite(ctx context.Context, path string, private bool) error {
	opts := e.storeOpts
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
func (e *Store) openSQLiteShared(ctx context.Context, path string) error {
	deadline := time.Now().Add(e.storeOpts.BusyTimeout)
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
		return errors.Is(err, engine.ErrDiskFull)
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
func (e *Store) openSQLiteImmutable(ctx context.Context, path string) error {
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
		if errors.Is(err, engine.ErrIncompatibleFormat) || errors.Is(err, engine.ErrCorrupt) {
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

// classify wraps SQLite errors that mean a damaged or foreign file as
// ErrCorrupt and a full disk (SQLITE_FULL, ENOSPC) as ErrDiskFull, keeping
// the cause.
func classify(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("%w: %w", engine.ErrCorrupt, err)
		case sqlite3.SQLITE_FULL:
			return fmt.Errorf("%w: %w", engine.ErrDiskFull, err)
		}
		if se.Code() == sqlite3.SQLITE_IOERR_SHMSIZE {
			return fmt.Errorf("%w: %w", engine.ErrDiskFull, err)
		}
	}
	if errors.Is(err, syscall.ENOSPC) && !errors.Is(err, engine.ErrDiskFull) {
		return fmt.Errorf("%w: %w", engine.ErrDiskFull, err)
	}
	return err
}
