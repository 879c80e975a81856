package vecstore

import (
	"context"
	"io"

	bolt "go.etcd.io/bbolt"
)

// FileName is the store's data file inside its directory; SnapshotFiles
// names every file the directory holds, for backup tools: FileName is
// copied with WriteSnapshot, the others are per-process hints and locks
// that a restored store recreates.
const FileName = dbFileName

// SnapshotFiles lists the store directory's file names.
func SnapshotFiles() []string { return []string{dbFileName, seqFileName, lockFileName} }

// WriteSnapshot writes a consistent copy of the store's file to w: one
// bbolt read transaction under the shared lock, so writers in this and
// other processes wait only for the copy, and the copy holds whole
// batches only. It returns the bytes written.
func (s *Store) WriteSnapshot(ctx context.Context, w io.Writer) (int64, error) {
	var n int64
	err := s.view(ctx, func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}
