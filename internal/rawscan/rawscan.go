// Package rawscan finds bytes in the files of a directory tree, as they
// lie on disk. Tests use it to prove that deleted text has left every file
// of a data dir (SQLite, WAL, FTS5 shadow tables, bbolt, exports). It
// reads files and touches nothing else.
package rawscan

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
)

// FilesContaining returns the files under dir whose raw bytes contain
// marker, in walk order.
func FilesContaining(dir, marker string) ([]string, error) {
	var hits []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(marker)) {
			hits = append(hits, p)
		}
		return nil
	})
	return hits, err
}
