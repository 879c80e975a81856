package sqlite

import (
	"fmt"
	"io/fs"
	"path/filepath"
)

// modeWarnings lists the data dir and the files in it that users other
// than the owner may read or write (mode bits 077), by path relative to
// dir ("." for dir itself). Symbolic links are not followed.
func modeWarnings(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if fi.Mode().Perm()&0o077 != 0 {
			rel, _ := filepath.Rel(dir, p)
			want := "0600"
			if d.IsDir() {
				want = "0700"
			}
			out = append(out, fmt.Sprintf("%s has mode %04o: other local users can read it (chmod %s %s)", rel, fi.Mode().Perm(), want, rel))
		}
		return nil
	})
	return out
}
