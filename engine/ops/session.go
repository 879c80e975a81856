package ops

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Bounds of the session logs.
const (
	// SessionLogMaxIDs bounds the ids one session's log keeps (the oldest
	// go first): far more than a session's context holds.
	SessionLogMaxIDs = 5000
	// SessionLogMaxAge is how long a session's log is kept after its last
	// write; a session resumed later may be recalled a message again.
	SessionLogMaxAge = 7 * 24 * time.Hour
	// SessionLogMaxFiles bounds the logs a directory keeps (the oldest go
	// first).
	SessionLogMaxFiles = 1000
)

// sessionLogExt names session log files, so that pruning never touches
// anything else in the directory.
const sessionLogExt = ".recalled.json"

// SessionLog is the record of the messages recalled in one agent session.
type SessionLog struct {
	path string
	ids  []int64
	has  map[int64]bool
}

// OpenSessionLog reads the log of session sessionID in dir (an empty log
// when there is none yet, or when the file is unreadable: the log only
// saves repeats). An empty sessionID gives a log that is never saved.
func OpenSessionLog(dir, sessionID string) *SessionLog {
	l := &SessionLog{has: map[int64]bool{}}
	if sessionID == "" {
		return l
	}
	l.path = sessionLogPath(dir, sessionID)
	data, err := os.ReadFile(l.path)
	if err != nil {
		return l
	}
	var ids []int64
	if json.Unmarshal(data, &ids) != nil {
		return l
	}
	l.Add(ids...)
	return l
}

// sessionLogPath names a session's file by a hash of its id: a session
// id is whatever the agent sends and must not pick the path.
func sessionLogPath(dir, sessionID string) string {
	sum := sha256.Sum256([]byte(sessionID))
	return filepath.Join(dir, hex.EncodeToString(sum[:16])+sessionLogExt)
}

// Has reports whether id was recalled in the session.
func (l *SessionLog) Has(id int64) bool { return l.has[id] }

// Add records ids as recalled.
func (l *SessionLog) Add(ids ...int64) {
	for _, id := range ids {
		if !l.has[id] {
			l.has[id] = true
			l.ids = append(l.ids, id)
		}
	}
	if n := len(l.ids) - SessionLogMaxIDs; n > 0 {
		for _, id := range l.ids[:n] {
			delete(l.has, id)
		}
		l.ids = append([]int64(nil), l.ids[n:]...)
	}
}

// Save writes the log (a temporary file renamed over the old one).
func (l *SessionLog) Save() error {
	if l.path == "" {
		return nil
	}
	data, err := json.Marshal(l.ids)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("ops: session log: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(l.path), ".tmp-recalled-*")
	if err != nil {
		return fmt.Errorf("ops: session log: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("ops: session log: %w", err)
	}
	if err := os.Rename(tmp.Name(), l.path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("ops: session log: %w", err)
	}
	return nil
}

// ForgetSession removes a session's log (the session ended, or its
// context was cleared or compacted, so what was recalled is gone from it).
func ForgetSession(dir, sessionID string) error {
	if sessionID == "" {
		return nil
	}
	if err := os.Remove(sessionLogPath(dir, sessionID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("ops: session log: %w", err)
	}
	return nil
}

// PruneSessionLogs removes the logs in dir last written before
// now-SessionLogMaxAge, then the oldest beyond SessionLogMaxFiles, and
// temporary files a killed writer left behind. A missing dir is fine.
func PruneSessionLogs(dir string, now time.Time) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ops: session logs: %w", err)
	}
	type logFile struct {
		path string
		mod  time.Time
	}
	var keep []logFile
	var errs []error
	for _, e := range entries {
		name := e.Name()
		logf, tmp := strings.HasSuffix(name, sessionLogExt), strings.HasPrefix(name, ".tmp-recalled-")
		if !logf && !tmp {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		p := filepath.Join(dir, name)
		old := now.Sub(info.ModTime()) > SessionLogMaxAge || tmp && now.Sub(info.ModTime()) > time.Hour
		if old {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if logf {
			keep = append(keep, logFile{p, info.ModTime()})
		}
	}
	if n := len(keep) - SessionLogMaxFiles; n > 0 {
		sort.Slice(keep, func(i, j int) bool { return keep[i].mod.Before(keep[j].mod) })
		for _, f := range keep[:n] {
			if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("ops: session logs: %w", err)
	}
	return nil
}
