package sqlite

import (
	"context"
	"embed"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

// ApplicationID is cairn's magic in the SQLite header (PRAGMA application_id): "carn".
const ApplicationID = 0x6361726E

//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations returns the embedded migrations in order; their numbers
// must be 1..n without gaps.
func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, ent := range entries {
		num, _, ok := strings.Cut(ent.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("engine: bad migration file name %q", ent.Name())
		}
		b, err := migrationFS.ReadFile("migrations/" + ent.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: ent.Name(), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("engine: migration %s out of sequence (want %04d)", m.name, i+1)
		}
	}
	return ms, nil
}

// FormatVersion is the database format this build writes: the number of
// embedded migrations.
func FormatVersion() int {
	ms, err := loadMigrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// migrate brings the database at path up to FormatVersion.
func (e *Store) migrate(ctx context.Context, path string) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	var appID, version, tables int
	row := e.w.QueryRowContext(ctx, "SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_schema)")
	if err := row.Scan(&appID, &version, &tables); err != nil {
		return fmt.Errorf("engine: open %s: %w", path, classify(err))
	}
	switch {
	case appID != 0 && appID != ApplicationID:
		return fmt.Errorf("%w: %s belongs to another application (application_id %#x)", engine.ErrIncompatibleFormat, path, appID)
	case appID == 0 && tables > 0:
		return fmt.Errorf("%w: %s is a SQLite database but not a cairn one", engine.ErrIncompatibleFormat, path)
	case version > len(ms):
		return fmt.Errorf("%w: %s has format version %d, this cairn reads versions up to %d: upgrade cairn", engine.ErrIncompatibleFormat, path, version, len(ms))
	}
	for _, m := range ms[version:] {
		if err := e.apply(ctx, m); err != nil {
			return fmt.Errorf("engine: migrate %s to version %d (%s): %w", path, m.version, m.name, classify(err))
		}
		e.opts.Logger.Info("applied migration", "path", path, "version", m.version, "name", m.name)
	}
	return nil
}

func (e *Store) apply(ctx context.Context, m migration) error {
	tx, err := e.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Another process may have migrated since we looked: re-read under the
	// write lock that BEGIN IMMEDIATE took.
	var current int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return err
	}
	if current >= m.version {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	if step := e.migrationStep(m.version); step != nil {
		if err := step(ctx, tx); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d", ApplicationID, m.version)); err != nil {
		return err
	}
	return tx.Commit()
}
