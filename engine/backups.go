package engine

import (
	"context"
	"io"
	"slices"
	"time"
)

// Backups of a store: what Store.Backup is asked and answers. The data
// dir's store writes the archive (engine/sqlite/backup.go, where its
// format is described); another store refuses.

// BackupManifest describes a backup.
type BackupManifest struct {
	Magic        string       `json:"magic"`
	Version      int          `json:"version"`
	CreatedAt    time.Time    `json:"created_at"`
	EngineFormat int          `json:"engine_format"`
	Files        []BackupFile `json:"files"`
	// VectorsSkipped: the vector store was left out (it is derived data);
	// after a restore, `cairn rebuild` re-embeds the messages.
	VectorsSkipped bool `json:"vectors_skipped,omitempty"`
}

// BackupFile is one file of a backup.
type BackupFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// SnapshotSource is a part of the data dir that writes its own consistent
// copy (for example the vector store, through a bbolt read transaction).
type SnapshotSource struct {
	// Path is the file's slash-separated path inside the data dir.
	Path string
	// Write writes a consistent copy of the file to w.
	Write func(ctx context.Context, w io.Writer) error
}

// BackupOptions configure a backup (Store.Backup, ops.Backup).
type BackupOptions struct {
	// Sources are further parts snapshotted by their owners. Files under
	// a source's path are not copied directly.
	Sources []SnapshotSource
	// SkipVectors leaves the vectors/ folder out: vectors are derived from
	// the messages, and `cairn rebuild` regenerates them after a restore.
	SkipVectors bool
	// Progress is called after each file.
	Progress func(Progress)
	// Overwrite replaces an existing file; without it a backup fails with
	// ErrExists and leaves the file alone.
	Overwrite bool
	// Leftover is called with each temporary of a killed backup that
	// the backup removed before it started.
	Leftover func(path string)
}

// ConfigFile is the configuration file's name inside the data dir.
const ConfigFile = "config.toml"

// HasConfig reports whether the backup holds a config.toml.
func (m *BackupManifest) HasConfig() bool {
	return slices.ContainsFunc(m.Files, func(f BackupFile) bool { return f.Path == ConfigFile })
}
