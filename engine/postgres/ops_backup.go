package postgres

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/engine"
)

// Backup refuses: cairn backup archives a data dir's files, and a
// PostgreSQL database is backed up with PostgreSQL's own tools.
func (s *Store) Backup(context.Context, string, engine.BackupOptions) (*engine.BackupManifest, error) {
	return nil, &engine.InvalidError{Field: "store", Rule: fmt.Sprintf("cairn backup archives a data dir; a %s store is backed up with its own tools "+
		"(pg_dump for the database, pg_basebackup for the server), or copied into a data dir with "+
		"`cairn migrate --from URL --to DIR` and that dir backed up", Kind)}
}
