package postgres

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/engine"
)

// What only a data dir serves today: a PostgreSQL store refuses it as
// bad input on "store", naming the Engine's method (engine.Unsupported)
// or, for a backup, PostgreSQL's own tools.

// Attach keeps the call that wakes the Engine's vector worker (a session
// import wakes it as the Engine's own writes do); PostgreSQL's search
// counts arrive through AddSearches.
func (s *Store) Attach(h engine.Host) { s.host = h }

// ChannelNeighbours refuses (Engine.Neighbours needs a data dir).
func (s *Store) ChannelNeighbours(context.Context, int64, int, int) (engine.Neighbours, error) {
	return engine.Neighbours{}, engine.Unsupported("Neighbours", Kind)
}

// BreadcrumbMessages refuses (ops.MessagesWithBreadcrumbs needs a
// data dir).
func (s *Store) BreadcrumbMessages(context.Context, int64, int) ([]engine.Message, error) {
	return nil, engine.Unsupported("MessagesWithBreadcrumbs", Kind)
}

// Backup refuses: cairn backup archives a data dir.
func (s *Store) Backup(context.Context, string, engine.BackupOptions) (*engine.BackupManifest, error) {
	return nil, &engine.InvalidError{Field: "store", Rule: fmt.Sprintf("cairn backup archives a data dir; a %s store is backed up with its own tools "+
		"(pg_dump for the database, pg_basebackup for the server), or copied into a data dir with "+
		"`cairn migrate --from URL --to DIR` and that dir backed up", Kind)}
}
