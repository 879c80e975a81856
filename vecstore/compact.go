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

// compactMinFree: Close compacts the file when its free pages exceed this
// fraction of the file (and compactMinBytes). Snapshot rewrites leave freed
// pages behind (bbolt never shrinks a file); a tenth keeps an SQ8 message
// store within its budget (1.5x the messages table; its data is about
// 1.4x) at the cost of a copy of the file after about every second
// snapshot of a growing collection.
const (
	compactMinFree  = 0.1
	compactMinBytes = 8 << 20
)

// Compact rewrites the file without its free pages if they exceed
// compactMinFree of it (force: always), under the exclusive lock, and atomically replaces
// it. Other processes are unaffected: they open the file per operation.
func (s *Store) Compact(ctx context.Context, force bool) error {
	s.ioMu.Lock()
	defer s.ioMu.Unlock()
	s.mu.RLock()
	closed := s.mu.closed
	s.mu.RUnlock()
	if closed {
		return chroma.ErrClosed
	}
	return s.compactLocked(ctx, force)
}

// REQUIRES: s.ioMu held.
func (s *Store) compactLocked(ctx context.Context, force bool) (err error) {
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
	free := int64(st.FreePageN+st.PendingPageN) * int64(src.Info().PageSize)
	if !force && (free < compactMinBytes || float64(free) < compactMinFree*float64(fi.Size())) {
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
	if err := dst.Sync(); err != nil {
		dst.Close()
		os.Remove(tmp)
		return err
	}
	if err := dst.Close(); err != nil {
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
