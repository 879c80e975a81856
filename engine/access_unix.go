//go:build unix

package engine

import "golang.org/x/sys/unix"

// writable reports whether this process may create files in dir (its
// permissions, a read-only mount), without writing anything.
func writable(dir string) bool { return unix.Access(dir, unix.W_OK) == nil }
