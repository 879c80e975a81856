package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairn-dev/cairn/engine"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Kind names the store in the engine's messages.
const Kind = "PostgreSQL"

// DefaultEfSearch is hnsw.ef_search unless Options.EfSearch sets it: at
// 100,000 messages it brings pgvector's semantic recall@10 to the
// embedded store's (bench/README.md, "ef_search on PostgreSQL").
const DefaultEfSearch = 800

// Options configure the store. The zero value means defaults.
type Options struct {
	// M and EfConstruction build each vector set's HNSW index; 0 means
	// 16 and 200 (the embedded store's message collections).
	M, EfConstruction int
	// EfSearch is hnsw.ef_search for vector searches (at least twice the
	// number of neighbours asked for is used); 0 means DefaultEfSearch.
	EfSearch int
	// MaxConns bounds the connection pool; 0 means 8.
	MaxConns int
}

// Store is an open PostgreSQL store. It implements engine.Store.
type Store struct {
	pool *pgxpool.Pool
	opts Options
	// iterative says the vector extension has iterative index scans (0.8+).
	iterative     bool
	vectorVersion string

	// fill is what this process fills the vectors with (fill.go).
	fill struct {
		sync.Mutex
		v      engine.Vectorizer
		set    engine.VectorSet // the set of this process's model
		hasSet bool
	}
	// host is what the Engine over this store lends it (Attach): the
	// call that wakes its vector worker after a session import.
	host engine.Host
}

var _ engine.Store = (*Store)(nil)

// IsDSN reports whether s names a PostgreSQL store (a postgres:// or
// postgresql:// URL) rather than a data dir.
func IsDSN(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Redact returns dsn without its password, for messages and logs.
func Redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://…"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// Open connects to dsn, checks the vector extension (creating it when the
// user may) and applies pending migrations. A malformed dsn is an
// *engine.InvalidError naming the field store; an unreachable server a
// plain error naming the host.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	if opts.M == 0 {
		opts.M = 16
	}
	if opts.EfConstruction == 0 {
		opts.EfConstruction = 200
	}
	if opts.EfSearch == 0 {
		opts.EfSearch = DefaultEfSearch
	}
	if opts.MaxConns == 0 {
		opts.MaxConns = 8
	}
	if opts.M < 2 || opts.M > 100 || opts.EfConstruction < 4 || opts.EfConstruction > 1000 || opts.EfSearch < 1 || opts.EfSearch > 1000 || opts.MaxConns < 1 {
		return nil, &engine.InvalidError{Field: "store", Rule: fmt.Sprintf("HNSW m must be 2..100, ef_construction 4..1000, ef_search 1..1000 (got %d, %d, %d)", opts.M, opts.EfConstruction, opts.EfSearch)}
	}
	if !IsDSN(dsn) {
		return nil, &engine.InvalidError{Field: "store", Rule: "must be a data dir or a postgres:// URL, got " + Redact(dsn)}
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, &engine.InvalidError{Field: "store", Rule: "not a valid PostgreSQL URL: " + Redact(dsn)}
	}
	cfg.MaxConns = int32(opts.MaxConns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect to %s: %w", Redact(dsn), err)
	}
	s := &Store{pool: pool, opts: opts}
	if err := s.open(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %s: %w", Redact(dsn), err)
	}
	return s, nil
}

func (s *Store) open(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("cannot reach the server: %w", err)
	}
	if err := s.pool.QueryRow(ctx, "SELECT extversion FROM pg_extension WHERE extname = 'vector'").Scan(&s.vectorVersion); errors.Is(err, pgx.ErrNoRows) {
		if _, err := s.pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector"); err != nil {
			return fmt.Errorf("the vector extension (pgvector) is not installed and cannot be created: %w", err)
		}
		if err := s.pool.QueryRow(ctx, "SELECT extversion FROM pg_extension WHERE extname = 'vector'").Scan(&s.vectorVersion); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	s.iterative = versionAtLeast(s.vectorVersion, 0, 8)
	return s.migrate(ctx)
}

// versionAtLeast compares a "major.minor[.patch]" version.
func versionAtLeast(v string, major, minor int) bool {
	var a, b int
	if _, err := fmt.Sscanf(v, "%d.%d", &a, &b); err != nil {
		return false
	}
	return a > major || a == major && b >= minor
}

// VectorVersion is the vector extension's version; IterativeScans says
// whether filtered vector searches use iterative index scans.
func (s *Store) VectorVersion() (string, bool) { return s.vectorVersion, s.iterative }

// migrationLock is the advisory lock key under which migrations run.
const migrationLock = 0x6361726E // "carn"

type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	ents, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range ents {
		var n int
		if _, err := fmt.Sscanf(e.Name(), "%04d_", &n); err != nil {
			return nil, fmt.Errorf("migration %s: %w", e.Name(), err)
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{n, e.Name(), string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: want number %d", m.name, i+1)
		}
	}
	return out, nil
}

// FormatVersion is the number of migrations this build knows.
func FormatVersion() int {
	ms, _ := migrations()
	return len(ms)
}

// migrate applies the missing migrations under the advisory lock.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
		return err
	}
	defer conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", migrationLock)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS cairn_format (
		app     text PRIMARY KEY,
		version integer NOT NULL)`); err != nil {
		return err
	}
	var app string
	var version int
	switch err := conn.QueryRow(ctx, "SELECT app, version FROM cairn_format LIMIT 1").Scan(&app, &version); {
	case errors.Is(err, pgx.ErrNoRows):
		if _, err := conn.Exec(ctx, "INSERT INTO cairn_format (app, version) VALUES ('cairn', 0)"); err != nil {
			return err
		}
	case err != nil:
		return err
	case app != "cairn":
		return fmt.Errorf("%w: the database's cairn_format names application %q", engine.ErrIncompatibleFormat, app)
	case version > len(ms):
		return fmt.Errorf("%w: the database is at format %d, this cairn knows formats up to %d", engine.ErrIncompatibleFormat, version, len(ms))
	}
	for _, m := range ms[version:] {
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			tx.Rollback(ctx)
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
		if step := migrationStep(m.version); step != nil {
			if err := step(ctx, tx); err != nil {
				tx.Rollback(ctx)
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
		}
		if _, err := tx.Exec(ctx, "UPDATE cairn_format SET version = $1 WHERE app = 'cairn'", m.version); err != nil {
			tx.Rollback(ctx)
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	return nil
}

// Attach keeps the call that wakes the Engine's vector worker (a session
// import wakes it as the Engine's own writes do); PostgreSQL's search
// counts arrive through AddSearches.
func (s *Store) Attach(h engine.Host) { s.host = h }

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// retryable reports whether err is a serialization failure or deadlock
// that a retry of the whole transaction resolves.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// inTx runs fn in a transaction, retried on serialization failures and
// deadlocks.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		err = pgx.BeginFunc(ctx, s.pool, fn)
		if !retryable(err) {
			return err
		}
	}
	return err
}
