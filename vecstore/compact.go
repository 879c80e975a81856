package vecstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	bolt "go.etcd.io/bbolt"
)

// compactMinFree: Compact rewrites the file when the space it can give
// back (free pages, and the slack bbolt grows the file by past its last
// page in use) is at least this fraction of it; Close also needs
// compactMinBytes of it. Snapshot rewrites and many small transactions
// leave freed pages behind (bbolt never shrinks a file); a tenth keeps an
// SQ8 message store within its budget (1.5x the messages table; its data
// is about 1.4x) at the cost of a copy of the file after about every
// second snapshot of a growing collection.
const (
	compactMinFree  = 0.1
	compactMinBytes = 8 << 20
)

// Compact writes a graph snapshot of the collections this process changed
// (as Close does, so that no snapshot rewrite follows the compaction),
// then rewrites the file without its free pages and cut at its last page
// in use if that gives back at least compactMinFree of it (force: always),
// under the exclusive lock, and atomically replaces it. Other processes
// are unaffected: they open the file per operation. A bulk load calls it
// at its end so that the file it leaves is as small as a fresh copy.
func (s *Store) Compact(ctx context.Context, force bool) error {
	s.mu.RLock()
	closed := s.mu.closed
	s.mu.RUnlock()
	if closed {
		return chroma.ErrClosed
	}
	if err := s.snapshotChanged(ctx); err != nil {
		return err
	}
	s.ioMu.Lock()
	defer s.ioMu.Unlock()
	minBytes := int64(0)
	if force {
		minBytes = -1
	}
	return s.compactLocked(ctx, minBytes)
}

// compactLocked compacts the file when the space it can give back is at
// least minBytes and compactMinFree of the file; a negative minBytes
// compacts always.
// REQUIRES: s.ioMu held.
func (s *Store) compactLocked(ctx context.Context, minBytes int64) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guard(&err)
	lk, err := lockFile(ctx, filepath.Join(s.dir, lockFileName), true, s.opts.LockTimeout)
	if err != nil {
		return err
	}
	defer lk.unlock()
	src, err := s.openDB(false)
	if err != nil {
		return err
	}
	defer func() {
		if src != nil {
			src.Close()
		}
	}()
	fi, err := os.Stat(s.path)
	if err != nil {
		return err
	}
	st := src.Stats()
	var used int64
	if err := src.View(func(tx *bolt.Tx) error { used = tx.Size(); return nil }); err != nil {
		return err
	}
	reclaim := int64(st.FreePageN+st.PendingPageN)*int64(src.Info().PageSize) + max(fi.Size()-used, 0)
	if minBytes >= 0 && (reclaim < minBytes || float64(reclaim) < compactMinFree*float64(fi.Size())) {
		return nil
	}
	tmp := s.path + ".compact"
	_ = os.Remove(tmp)
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{NoSync: true, PageSize: src.Info().PageSize,
		FreelistType: bolt.FreelistMapType})
	if err != nil {
		return err
	}
	dst.AllocSize = allocSize
	if err := bolt.Compact(dst, src, 64<<20); err != nil {
		dst.Close()
		os.Remove(tmp)
		return fmt.Errorf("vecstore: compact: %w", err)
	}
	var size int64
	if err := dst.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil }); err != nil {
		dst.Close()
		os.Remove(tmp)
		return err
	}
	if err := dst.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	// bbolt sizes a new file in powers of two up to 1 GiB: cut it at its
	// last page in use (a later write grows it again as needed).
	if err := truncateSync(tmp, size); err != nil {
		os.Remove(tmp)
		return err
	}
	// Keep bbolt's own lock on the old file until the new one is in place.
	if err := os.Rename(tmp, s.path); err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(s.dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// truncateSync cuts the file at path to size bytes and flushes it.
func truncateSync(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
