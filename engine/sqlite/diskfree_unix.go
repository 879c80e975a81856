//go:build linux || darwin

package sqlite

import "golang.org/x/sys/unix"

// diskNearlyFull reports whether the file system holding dir has less than
// 1 MiB available to this user: SQLite's errors on a full disk (a -shm file
// it cannot create or grow) do not say why, this does.
func diskNearlyFull(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	return uint64(st.Bavail)*uint64(st.Bsize) < 1<<20
}

// diskAvailable returns the bytes available to this user on the file
// system holding dir; ok is false when it cannot be known.
func diskAvailable(dir string) (avail uint64, ok bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}
