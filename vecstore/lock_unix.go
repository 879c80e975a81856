//go:build unix

package vecstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// fileLock is the store's inter-process lock (DIR/vectors.lock), taken
// before bbolt is opened: shared for readers, exclusive for writers. bbolt's
// own flock then never contends; ours blocks in the kernel instead of
// bbolt's 50 ms retry loop, which keeps write latency low under contention.
type fileLock struct{ f *os.File }

func lockFile(ctx context.Context, path string, exclusive bool, timeout time.Duration) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil && !exclusive && (errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS)) {
		// A reader of a store it may not write (another user's, a
		// read-only mount) shares the lock through a read-only handle.
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, fmt.Errorf("vecstore: open lock file: %w", err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	// Fast path: uncontended.
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err == nil {
		return &fileLock{f: f}, nil
	}
	// Block in a goroutine (the kernel queues waiters, so there is no
	// polling delay), bounded by timeout and ctx. If we give up, the
	// goroutine releases the lock as soon as it gets it.
	got := make(chan error, 1)
	go func() {
		for {
			err := syscall.Flock(int(f.Fd()), how)
			if !errors.Is(err, syscall.EINTR) {
				got <- err
				return
			}
		}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	abandon := func() {
		go func() {
			if err := <-got; err == nil {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			}
			f.Close()
		}()
	}
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("vecstore: lock %s: %w", path, err)
		}
		return &fileLock{f: f}, nil
	case <-timer.C:
		abandon()
		return nil, fmt.Errorf("vecstore: lock %s: timed out after %v", path, timeout)
	case <-ctx.Done():
		abandon()
		return nil, ctx.Err()
	}
}

func (l *fileLock) unlock() {
	if l != nil && l.f != nil {
		_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		_ = l.f.Close()
	}
}
