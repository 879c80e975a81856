package vecstore

import (
	"bytes"
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"
)

// scrubFreePages overwrites every free page of db with zeros and syncs the
// file. bbolt copies a page on write and leaves the old copy's bytes in the
// freed page until it is reused, so without this a deleted document stays
// readable in vectors.db (after a kill -9 too) until the file is
// compacted. Pages already zero are only read. It runs after a committed
// delete, under the exclusive file lock with no transaction open, so no
// reader can still need a freed page.
//
// REQUIRES: the exclusive file lock held and db open read-write.
func scrubFreePages(db *bolt.DB, path string) error {
	var free []int
	err := db.View(func(tx *bolt.Tx) error {
		n := int(tx.Size() / int64(db.Info().PageSize))
		for id := 2; id < n; id++ {
			info, err := tx.Page(id)
			if err != nil {
				return err
			}
			if info != nil && info.Type == "free" {
				free = append(free, id)
			}
		}
		return nil
	})
	if err != nil || len(free) == 0 {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("vecstore: scrub free pages: %w", err)
	}
	defer f.Close()
	ps := db.Info().PageSize
	zero := make([]byte, ps)
	buf := make([]byte, ps)
	wrote := false
	for _, id := range free {
		off := int64(id) * int64(ps)
		if _, err := f.ReadAt(buf, off); err != nil {
			return fmt.Errorf("vecstore: scrub free pages: %w", err)
		}
		if bytes.Equal(buf, zero) {
			continue
		}
		if _, err := f.WriteAt(zero, off); err != nil {
			return fmt.Errorf("vecstore: scrub free pages: %w", err)
		}
		wrote = true
	}
	if wrote {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("vecstore: scrub free pages: %w", err)
		}
	}
	return nil
}
