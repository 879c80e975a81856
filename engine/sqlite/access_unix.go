//go:build unix

package sqlite

import "golang.org/x/sys/unix"

// Writable reports whether this process may create files in dir (its
// permissions, a read-only mount), without writing anything.
func Writable(dir string) bool { return unix.Access(dir, unix.W_OK) == nil }
