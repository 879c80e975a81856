//go:build !unix

package vecstore

import (
	"context"
	"time"
)

// fileLock is a no-op where flock is unavailable: bbolt's own file lock
// (with its 50 ms retry) then serializes processes.
type fileLock struct{}

func lockFile(ctx context.Context, path string, exclusive bool, timeout time.Duration) (*fileLock, error) {
	return &fileLock{}, ctx.Err()
}

func (l *fileLock) unlock() {}
