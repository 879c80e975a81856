package sqlite

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Temporary files of backup and restore, and how a later run finds the
// ones a killed process left behind.
//
// A backup stages its SQLite copy (and its snapshots) in a folder named
// backupStagePrefix+random inside the data dir, where the next open of the
// data dir (any writing command: backup, gc, purge, ...) reaches it; the
// stage also names, in stageArchiveFile, the archive's temporary file
// (".NAME.tmp-*" beside the archive, the only place it can be renamed into
// place from). A restore extracts into ".DIR.restore-*" beside DIR. Each
// is locked (flock) by the process that made it for as long as it runs,
// so a temporary is removed only once no process holds it: never one of a
// live concurrent operation. Where flock is missing, one older than
// staleAge is taken for dead.
const (
	backupStagePrefix = ".cairn-backup-"
	stageArchiveFile  = "archive-tmp"
	staleAge          = 24 * time.Hour
)

// archiveTempPrefix is the name prefix of archive's temporary file.
func archiveTempPrefix(archive string) string { return "." + filepath.Base(archive) + ".tmp-" }

// restoreTempPrefix is the name prefix of a restore into dir's temporary
// folder.
func restoreTempPrefix(dir string) string { return "." + filepath.Base(dir) + ".restore-" }

// removeStale removes the temporary file or folder p unless a live process
// holds it, and reports whether it did.
func removeStale(p string) bool {
	release, ok := tryHold(p)
	if !ok {
		return false
	}
	defer release()
	return os.RemoveAll(p) == nil
}

// removeStaleIn removes the stale entries of dir whose names start with
// prefix and returns their paths.
func removeStaleIn(dir, prefix string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, en := range ents {
		if !strings.HasPrefix(en.Name(), prefix) {
			continue
		}
		p := filepath.Join(dir, en.Name())
		if removeStale(p) {
			removed = append(removed, p)
		}
	}
	return removed
}

// removeBackupStages removes the stages of killed backups in the data dir
// dir, with the archive temporaries they name, and returns what it removed.
func removeBackupStages(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, en := range ents {
		if !strings.HasPrefix(en.Name(), backupStagePrefix) {
			continue
		}
		stage := filepath.Join(dir, en.Name())
		release, ok := tryHold(stage)
		if !ok {
			continue // a live backup's
		}
		if b, err := os.ReadFile(filepath.Join(stage, stageArchiveFile)); err == nil {
			tmp := string(b)
			if filepath.IsAbs(tmp) && strings.HasPrefix(filepath.Base(tmp), ".") && strings.Contains(filepath.Base(tmp), ".tmp-") {
				if _, err := os.Lstat(tmp); err == nil && removeStale(tmp) {
					removed = append(removed, tmp)
				}
			}
		}
		if os.RemoveAll(stage) == nil {
			removed = append(removed, stage)
		}
		release()
	}
	return removed
}
