package pgcollections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SchemaVersion is the newest schema this package reads and writes.
const SchemaVersion = 1

// DefaultExactMax is the number of records up to which a collection (or a
// filtered set) is scanned exactly, as vecstore's default ExactMax.
const DefaultExactMax = 2048

// Options configures a Store. The zero value gives the defaults.
type Options struct {
	// AllowReset enables Reset (Chroma's allow_reset).
	AllowReset bool
	// ExactMax: collections and filtered sets of at most this many records
	// are scanned exactly (default DefaultExactMax).
	ExactMax int
	// BeamFactor multiplies a collection's ef_search to give hnsw.ef_search
	// (default 2, as vecstore; pgvector caps it at 1000).
	BeamFactor float64
	// MaxConns bounds the pool (default pgxpool's: max(4, GOMAXPROCS)).
	MaxConns int32
	// Logger receives warnings (nil discards).
	Logger *slog.Logger
}

// A Store is a chroma.Store: the Chroma API serves it as it serves vecstore's.
var _ chroma.Store = (*Store)(nil)

// Store is a collection store in one PostgreSQL database.
type Store struct {
	pool *pgxpool.Pool
	opts Options
	log  *slog.Logger
	// iterative reports pgvector >= 0.8.0 (hnsw.iterative_scan).
	iterative bool
	pgvector  string
}

// Open connects to the database named by dsn (a postgres:// URL or a
// key=value string), migrates it to SchemaVersion and returns the Store.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	if opts.ExactMax <= 0 {
		opts.ExactMax = DefaultExactMax
	}
	if opts.BeamFactor <= 0 {
		opts.BeamFactor = 2
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgcollections: parsing the connection string: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgcollections: connecting: %w", err)
	}
	s := &Store{pool: pool, opts: opts, log: log}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the pool. It is idempotent.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// PgvectorVersion is the installed pgvector version; IterativeScans says
// whether it has iterative index scans (0.8.0 and later).
func (s *Store) PgvectorVersion() string { return s.pgvector }
func (s *Store) IterativeScans() bool    { return s.iterative }

// migrationLock is the advisory lock key held while migrating ("cairnchr").
const migrationLock = 0x636169726e636872

// migrations[i] brings the schema from version i to i+1.
var migrations = []string{`
CREATE TABLE chroma_tenants (name text COLLATE "C" PRIMARY KEY);
CREATE TABLE chroma_databases (
	tenant text COLLATE "C" NOT NULL,
	name   text COLLATE "C" NOT NULL,
	id     uuid NOT NULL,
	PRIMARY KEY (tenant, name)
);
CREATE TABLE chroma_collections (
	id         uuid PRIMARY KEY,
	tenant     text COLLATE "C" NOT NULL,
	database   text COLLATE "C" NOT NULL,
	name       text COLLATE "C" NOT NULL,
	metadata   jsonb,
	float_keys jsonb,
	config     jsonb NOT NULL,
	dimension  integer NOT NULL DEFAULT 0,
	model      text NOT NULL DEFAULT '',
	UNIQUE (tenant, database, name),
	FOREIGN KEY (tenant, database) REFERENCES chroma_databases (tenant, name) ON DELETE CASCADE
);
CREATE SEQUENCE chroma_record_seq;
CREATE TABLE chroma_records (
	collection uuid NOT NULL REFERENCES chroma_collections (id) ON DELETE CASCADE,
	id         text COLLATE "C" NOT NULL,
	seq        bigint NOT NULL,
	embedding  vector,
	document   text,
	uri        text,
	metadata   jsonb,
	float_keys jsonb,
	PRIMARY KEY (collection, id)
);
CREATE INDEX chroma_records_order ON chroma_records (collection, seq);
CREATE INDEX chroma_records_metadata ON chroma_records USING gin (metadata jsonb_path_ops);
`}

// migrate applies the missing migrations, one transaction each, under an
// advisory lock so that processes starting together migrate once.
func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgcollections: connecting: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("pgcollections: taking the migration lock: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrationLock))
	}()
	if _, err := conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`); err != nil {
		return fmt.Errorf("pgcollections: the vector extension (pgvector) is required: %w", err)
	}
	if err := conn.QueryRow(ctx, `SELECT extversion FROM pg_extension WHERE extname = 'vector'`).Scan(&s.pgvector); err != nil {
		return fmt.Errorf("pgcollections: reading pgvector's version: %w", err)
	}
	s.iterative = versionAtLeast(s.pgvector, 0, 8)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS cairn_chroma_schema (version integer NOT NULL, applied timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("pgcollections: schema table: %w", err)
	}
	var version int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM cairn_chroma_schema`).Scan(&version); err != nil {
		return fmt.Errorf("pgcollections: reading the schema version: %w", err)
	}
	if version > SchemaVersion {
		return &chroma.Error{Class: chroma.ErrIncompatibleFormat, Rule: chroma.RuleFormat, Value: strconv.Itoa(version),
			Reason: fmt.Sprintf("the database's Chroma schema is version %d; this cairn reads up to %d", version, SchemaVersion)}
	}
	for v := version; v < SchemaVersion; v++ {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO cairn_chroma_schema (version) VALUES ($1)`, v+1)
			return err
		})
		if err != nil {
			return fmt.Errorf("pgcollections: migrating to schema version %d: %w", v+1, err)
		}
	}
	return s.ensureDefaults(ctx, conn)
}

// querier is what a connection, a pool and a transaction share.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ensureDefaults creates default_tenant and default_database if missing.
func (s *Store) ensureDefaults(ctx context.Context, q querier) error {
	_, err := q.Exec(ctx, `INSERT INTO chroma_tenants (name) VALUES ($1) ON CONFLICT DO NOTHING`, chroma.DefaultTenant)
	if err == nil {
		_, err = q.Exec(ctx, `INSERT INTO chroma_databases (tenant, name, id) VALUES ($1, $2, gen_random_uuid()) ON CONFLICT DO NOTHING`,
			chroma.DefaultTenant, chroma.DefaultDatabase)
	}
	if err != nil {
		return fmt.Errorf("pgcollections: default tenant and database: %w", err)
	}
	return nil
}

func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// errCommitThenRefuse carries a refusal out of a transaction that must
// commit first (a write that fixes the collection's dimension and is then
// refused, as Chroma does).
type errCommitThenRefuse struct{ err error }

func (e *errCommitThenRefuse) Error() string { return e.err.Error() }

// inTx runs fn in a transaction, retrying when PostgreSQL aborts it for a
// deadlock or a serialization failure (several processes creating indexes
// or writing the same rows). fn may return *errCommitThenRefuse to commit
// and still fail.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	for attempt := 0; ; attempt++ {
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			err := fn(tx)
			var ctr *errCommitThenRefuse
			if errors.As(err, &ctr) {
				if cerr := tx.Commit(ctx); cerr != nil {
					return cerr
				}
			}
			return err
		})
		var ctr *errCommitThenRefuse
		if errors.As(err, &ctr) {
			return ctr.err
		}
		var pe *pgconn.PgError
		if attempt < 10 && errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001") {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(attempt+1) * 10 * time.Millisecond):
			}
			continue
		}
		return s.mapErr(err)
	}
}

// mapErr gives a PostgreSQL error that a request caused its vecstore class.
func (s *Store) mapErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "22P05", "22021": // untranslatable character: NUL in text or jsonb
			e := nulRefusal("documents, uris, ids").(*chroma.Error)
			e.Err = err
			return e
		}
	}
	return err
}
