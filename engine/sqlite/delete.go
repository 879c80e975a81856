package sqlite

import (
	"context"
	"fmt"
)

// The embedded store's deletes leave no text behind in the WAL.

// scrubDeleted moves a committed delete out of the WAL: the WAL frames
// still hold the deleted text as it was written, so it checkpoints them
// into the database file (where secure_delete has zeroed the row) and
// truncates the WAL to zero bytes. A reader holding an old snapshot makes
// SQLite wait (busy_timeout); if the checkpoint still cannot finish, the
// next delete or GC completes it, and a warning is logged.
func (d *Store) scrubDeleted(ctx context.Context) error {
	var busy, logFrames, checkpointed int
	for range 3 {
		err := d.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &checkpointed)
		if err != nil {
			return fmt.Errorf("engine: checkpoint after delete: %w", classify(err))
		}
		if busy == 0 {
			return nil
		}
	}
	d.opts.Logger.Warn("checkpoint after delete blocked by readers; the deleted text stays in the WAL until the next delete or gc")
	return nil
}
