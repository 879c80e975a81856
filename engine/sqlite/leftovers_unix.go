//go:build unix

package sqlite

import (
	"os"

	"golang.org/x/sys/unix"
)

// hold locks the temporary file or folder p (flock, exclusive) until
// release; the lock dies with the process, so a killed operation's
// temporaries are free to remove.
func hold(p string) (release func(), err error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// tryHold is hold for a temporary of another process: ok is false while
// that process holds it.
func tryHold(p string) (release func(), ok bool) {
	release, err := hold(p)
	return release, err == nil
}
