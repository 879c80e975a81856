//go:build !unix

package sqlite

import (
	"os"
	"time"
)

// hold cannot lock here: liveness is judged by age (tryHold).
func hold(string) (release func(), err error) { return func() {}, nil }

// tryHold takes a temporary older than staleAge for a dead process's.
func tryHold(p string) (release func(), ok bool) {
	fi, err := os.Lstat(p)
	if err != nil || time.Since(fi.ModTime()) < staleAge {
		return nil, false
	}
	return func() {}, true
}
