package ops

import (
	"context"

	"github.com/cairn-dev/cairn/engine"
)

// Backup writes a consistent snapshot of e's store to the file archive
// (Store.Backup; the data dir's is engine/sqlite's Store.Backup, whose
// Restore and VerifyBackup read it without an open engine). Another store
// refuses and names its own tools.
func Backup(ctx context.Context, e *engine.Engine, archive string, opts engine.BackupOptions) (*engine.BackupManifest, error) {
	var m *engine.BackupManifest
	err := e.Use(func(s engine.Store) error {
		var err error
		m, err = s.Backup(ctx, archive, opts)
		return err
	})
	return m, err
}
