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

// BackupOptions configure Backups.Create.
type BackupOptions struct {
	// Sources are further parts snapshotted by their owners. Files under
	// a source's path are not copied directly.
	Sources []SnapshotSource
	// SkipVectors leaves the vectors/ folder out: vectors are derived from
	// the messages, and `cairn rebuild` regenerates them after a restore.
	SkipVectors bool
	// Progress is called after each file.
	Progress func(Progress)
	// Overwrite replaces an existing file; without it Create fails with
	// ErrExists and leaves the file alone.
	Overwrite bool
	// Leftover is called with each temporary of a killed backup that
	// Create removed before it started.
	Leftover func(path string)
}

// Backups writes backups of the store (Restore and VerifyBackup read
// them without an open engine). Get it from Engine.Backups; it closes with
// the engine.
type Backups struct {
	over *Engine
}

// Create writes a consistent snapshot of the store to the file archive
// (Store.Backup; the data dir's is engine/sqlite's Store.Backup). Another store
// refuses and names its own tools.
func (bk *Backups) Create(ctx context.Context, archive string, opts BackupOptions) (*BackupManifest, error) {
	return onStore(bk.over, func(st Store) (*BackupManifest, error) { return st.Backup(ctx, archive, opts) })
}

// ConfigFile is the configuration file's name inside the data dir.
const ConfigFile = "config.toml"

// HasConfig reports whether the backup holds a config.toml.
func (m *BackupManifest) HasConfig() bool {
	return slices.ContainsFunc(m.Files, func(f BackupFile) bool { return f.Path == ConfigFile })
}
