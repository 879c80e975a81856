package sqlite

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/vecstore"
	"github.com/klauspost/compress/zstd"
)

// Backup archive format (version 1).
//
// A backup is one zstd stream holding a POSIX tar stream. The first tar
// entry is ManifestName, a JSON object:
//
//	{"magic": "cairn-backup", "version": 1, "created_at": RFC 3339,
//	 "engine_format": N, "files": [{"path": "cairn.db", "size": S, "sha256": hex}, ...]}
//
// followed by one regular-file entry per manifest file, in manifest order,
// with slash-separated paths relative to the data dir. Restore refuses a
// newer version (ErrIncompatibleFormat) and anything that does not match the
// manifest exactly (ErrCorrupt).
const (
	ManifestName  = "cairn-backup.json"
	backupMagic   = "cairn-backup"
	backupVersion = 1
)

// Backup writes a consistent snapshot of the data dir to the file archive
// (written atomically). SQLite is copied with VACUUM INTO inside one read
// transaction, so writers keep going and the copy is consistent;
// opts.Sources snapshot their own parts; config.toml and models/ are copied
// as they are (they are replaced atomically, never edited in place), and a
// file that changes while it is archived fails the backup. The vectors/
// folder is refused unless a source covers it, since copying a live bbolt
// file is not consistent.
func (bk *Store) Backup(ctx context.Context, archive string, opts engine.BackupOptions) (*engine.BackupManifest, error) {
	archive, err := filepath.Abs(archive)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(archive, bk.dir+string(filepath.Separator)) {
		return nil, invalid("file", "the backup file must be outside the data dir %s", bk.dir)
	}
	if _, err := os.Lstat(archive); err == nil && !opts.Overwrite {
		return nil, fmt.Errorf("backup file %s: %w (pass --force to replace it)", archive, engine.ErrExists)
	}
	// What killed backups left: stages in the data dir (with the archive
	// temporaries they name) and this archive's temporaries.
	for _, p := range append(removeBackupStages(bk.dir), removeStaleIn(filepath.Dir(archive), archiveTempPrefix(archive))...) {
		if opts.Leftover != nil {
			opts.Leftover(p)
		}
	}
	// The stage is inside the data dir, where the next open (gc, purge,
	// backup) removes it if this process is killed: it holds a full copy
	// of the database.
	stage, err := os.MkdirTemp(bk.dir, backupStagePrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("engine: backup: %w", err)
	}
	release, err := hold(stage)
	if err != nil {
		os.RemoveAll(stage)
		return nil, fmt.Errorf("engine: backup: %w", err)
	}
	defer func() {
		os.RemoveAll(stage)
		release()
	}()
	entries, err := bk.collect(ctx, stage, opts)
	if err != nil {
		return nil, err
	}
	m := &engine.BackupManifest{Magic: backupMagic, Version: backupVersion, CreatedAt: bk.opts.Now().UTC().Truncate(time.Millisecond), EngineFormat: FormatVersion(), VectorsSkipped: opts.SkipVectors}
	for _, en := range entries {
		m.Files = append(m.Files, en.BackupFile)
	}
	if err := writeArchive(ctx, archive, stage, m, entries, opts.Overwrite, opts.Progress); err != nil {
		return nil, err
	}
	return m, nil
}

// backupEntry is one file of a backup and where its bytes are read from
// (the data dir, or the staging folder for snapshots).
type backupEntry struct {
	engine.BackupFile
	src string
}

// collect snapshots SQLite and opts.Sources into stage and lists every
// file of the backup, sorted by path.
func (bk *Store) collect(ctx context.Context, stage string, opts engine.BackupOptions) ([]backupEntry, error) {
	var entries []backupEntry
	addStaged := func(rel string, write func(w io.Writer) error) error {
		dst := filepath.Join(stage, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		if err := write(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		bf, err := hashFile(dst, rel)
		if err != nil {
			return err
		}
		entries = append(entries, backupEntry{bf, dst})
		return nil
	}

	// SQLite: VACUUM INTO from a connection of its own.
	dbCopy := filepath.Join(stage, DBFile)
	db, err := sql.Open("sqlite", dsn(filepath.Join(bk.dir, DBFile), bk.storeOpts, false))
	if err != nil {
		return nil, fmt.Errorf("engine: backup: %w", err)
	}
	_, err = db.ExecContext(ctx, "VACUUM INTO ?", dbCopy)
	db.Close()
	if err != nil {
		return nil, fmt.Errorf("engine: backup: snapshot %s: %w", DBFile, classify(err))
	}
	bf, err := hashFile(dbCopy, DBFile)
	if err != nil {
		return nil, err
	}
	entries = append(entries, backupEntry{bf, dbCopy})
	covered := map[string]bool{DBFile: true, DBFile + "-wal": true, DBFile + "-shm": true}
	// The vector store (message vectors and Chroma collections) snapshots
	// itself after SQLite: a vector acknowledged in SQLite's copy (its
	// outbox row gone) was written before it, so it is in this later copy;
	// see vectorsSource for what a restore reconciles.
	if !opts.SkipVectors {
		src, err := bk.vectorsSource(ctx, opts.Sources)
		if err != nil {
			return nil, err
		}
		if src != nil {
			opts.Sources = append(opts.Sources, *src)
			for _, f := range vecstore.SnapshotFiles() {
				if f != vecstore.FileName { // the source's own path is marked below
					covered[VectorsDir+"/"+f] = true
				}
			}
		}
	}
	for _, s := range opts.Sources {
		if !filepath.IsLocal(filepath.FromSlash(s.Path)) || covered[s.Path] {
			return nil, invalid("source", "bad or duplicate path %q", s.Path)
		}
		covered[s.Path] = true
		if err := addStaged(s.Path, func(w io.Writer) error { return s.Write(ctx, w) }); err != nil {
			return nil, fmt.Errorf("engine: backup: snapshot %s: %w", s.Path, err)
		}
	}
	direct, err := bk.direct(covered, opts.SkipVectors)
	if err != nil {
		return nil, err
	}
	entries = append(entries, direct...)
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	return entries, nil
}

// direct lists the data dir's files that are copied as they are: the
// regular files a restore accepts (restorable) not covered by a snapshot,
// skipping dot files (temporary files of atomic replaces). Anything else a
// user left in the data dir stays out of the backup.
func (bk *Store) direct(covered map[string]bool, skipVectors bool) ([]backupEntry, error) {
	var entries []backupEntry
	err := filepath.WalkDir(bk.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(bk.dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir // a backup's stage, or another temporary
			}
			if rel == VectorsDir && skipVectors {
				return fs.SkipDir
			}
			if rel == VectorsDir && !coveredPrefix(covered, VectorsDir+"/") {
				entries, _ := os.ReadDir(p)
				if len(entries) > 0 {
					return fmt.Errorf("engine: backup: %s holds a vector store that cannot be snapshotted consistently yet; back up without it (vectors are rebuilt from the messages with cairn rebuild after a restore)", p)
				}
			}
			return nil
		}
		if covered[rel] || strings.HasPrefix(path.Base(rel), ".") || !d.Type().IsRegular() || !restorable(rel) {
			return nil
		}
		for c := range covered {
			if strings.HasPrefix(rel, c+"/") {
				return nil
			}
		}
		bf, err := hashFile(p, rel)
		if err != nil {
			return err
		}
		entries = append(entries, backupEntry{bf, p})
		return nil
	})
	return entries, err
}

// writeArchive writes m and the entries to archive atomically: a
// zstd-compressed tar in a temporary file, synced and renamed. An entry
// whose bytes no longer match its hash fails the backup.
func writeArchive(ctx context.Context, archive, stage string, m *engine.BackupManifest, entries []backupEntry, overwrite bool, progress func(engine.Progress)) error {
	mj, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(archive), archiveTempPrefix(archive)+"*")
	if err != nil {
		return fmt.Errorf("engine: backup: %w", err)
	}
	ok := false
	release := func() {}
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
		release()
	}()
	if release, err = hold(tmp.Name()); err != nil {
		return fmt.Errorf("engine: backup: %w", err)
	}
	// The stage names the temporary, so that whoever removes a killed
	// backup's stage removes it too.
	if err := os.WriteFile(filepath.Join(stage, stageArchiveFile), []byte(tmp.Name()), 0o600); err != nil {
		return fmt.Errorf("engine: backup: %w", err)
	}
	zw, err := zstd.NewWriter(tmp, zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: ManifestName, Mode: 0o600, Size: int64(len(mj)), ModTime: m.CreatedAt, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(mj); err != nil {
		return err
	}
	for i, en := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: en.Path, Mode: 0o600, Size: en.Size, ModTime: m.CreatedAt, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		f, err := os.Open(en.src)
		if err != nil {
			return err
		}
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(tw, h), io.LimitReader(f, en.Size))
		f.Close()
		if err != nil {
			return fmt.Errorf("engine: backup %s: %w", en.Path, err)
		}
		if n != en.Size || hex.EncodeToString(h.Sum(nil)) != en.SHA256 {
			return fmt.Errorf("engine: backup: %s changed while it was archived; run the backup again", en.Path)
		}
		if progress != nil {
			progress(engine.Progress{Done: int64(i + 1), Total: int64(len(entries)), Item: en.Path})
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if overwrite {
		if err := os.Rename(tmp.Name(), archive); err != nil {
			return fmt.Errorf("engine: backup: %w", err)
		}
	} else {
		// A hard link fails if a file appeared meanwhile: never replaced
		// without Overwrite, even in a race.
		if err := os.Link(tmp.Name(), archive); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("backup file %s: %w (pass --force to replace it)", archive, engine.ErrExists)
			}
			return fmt.Errorf("engine: backup: %w", err)
		}
		os.Remove(tmp.Name())
	}
	ok = true
	return syncDir(filepath.Dir(archive))
}

func coveredPrefix(covered map[string]bool, prefix string) bool {
	for c := range covered {
		if strings.HasPrefix(c, prefix) {
			return true
		}
	}
	return false
}

func hashFile(p, rel string) (engine.BackupFile, error) {
	f, err := os.Open(p)
	if err != nil {
		return engine.BackupFile{}, fmt.Errorf("engine: backup: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return engine.BackupFile{}, fmt.Errorf("engine: backup: %w", err)
	}
	return engine.BackupFile{Path: rel, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// restorable reports whether a backup may hold the file rel (slash
// separated, relative to the data dir): the database, the vector store's
// files, the configuration and imported models. A backup listing anything
// else was not made by cairn and is refused.
func restorable(rel string) bool {
	return rel == DBFile || rel == engine.ConfigFile || strings.HasPrefix(rel, VectorsDir+"/") || strings.HasPrefix(rel, "models/")
}

// VerifyBackup reads a whole backup and checks it against its manifest,
// then checks its stores: it opens a copy of cairn.db and vectors/ in a
// temporary folder and runs the same checks as Restore (SQLite
// quick_check, foreign keys, FTS5 integrity, vectors against messages,
// the vector store's own check). The data dir is not touched.
func VerifyBackup(ctx context.Context, archive string) (*engine.BackupManifest, error) {
	m, err := readBackup(ctx, archive, DefaultMaxExpansion, nil)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", ".cairn-verify-*")
	if err != nil {
		return nil, fmt.Errorf("engine: verify backup: %w", err)
	}
	defer os.RemoveAll(tmp)
	// Everything a restore would open is checked, the vector store
	// included: a backup with vectors checked without them reports every
	// vectored message as missing its vector, and a damaged vector file
	// would pass. Models are only read (their checksums): nothing opens
	// them here.
	opened := func(f engine.BackupFile) bool { return f.Path == DBFile || strings.HasPrefix(f.Path, VectorsDir+"/") }
	if err := checkSpace(os.TempDir(), &engine.BackupManifest{Files: slices.DeleteFunc(slices.Clone(m.Files), func(f engine.BackupFile) bool { return !opened(f) })}, false); err != nil {
		return nil, err
	}
	if _, err := readBackup(ctx, archive, DefaultMaxExpansion, func(f engine.BackupFile, r io.Reader) error {
		if !opened(f) {
			return nil
		}
		return extractFile(filepath.Join(tmp, filepath.FromSlash(f.Path)), r)
	}); err != nil {
		return nil, err
	}
	if err := checkRestored(ctx, tmp); err != nil {
		return nil, err
	}
	return m, nil
}

// checkRestored opens the store in dir and checks it.
func checkRestored(ctx context.Context, dir string) error {
	e, s, err := OpenEngineStore(ctx, dir, engine.Options{}, Options{})
	if err != nil {
		return fmt.Errorf("engine: restore: the backup's database does not open: %w", err)
	}
	cerr := engine.CheckStore(ctx, s)
	if st := s.VectorStore(); st != nil && cerr == nil {
		if err := st.Check(ctx); err != nil {
			cerr = fmt.Errorf("vectors: %w", engine.VectorStoreError(err))
		}
	}
	if err := e.Close(); err != nil && cerr == nil {
		cerr = err
	}
	if cerr != nil {
		return fmt.Errorf("engine: restore: the backup's database fails its check: %w", cerr)
	}
	return nil
}

// extractFile writes r to a new file dst (0600) and syncs it.
func extractFile(dst string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// RestoreOptions configure Restore.
type RestoreOptions struct {
	Progress func(engine.Progress)
	// Config restores the backup's config.toml too. Without it the
	// restored dir has none (defaults apply): a configuration can turn
	// redaction off or send exports elsewhere, so it is taken from a
	// backup only when asked.
	Config bool
	// Leftover is called with each temporary folder of a killed restore
	// into the same folder that Restore removed before it started.
	Leftover func(path string)
	// MaxExpansion bounds how many times the archive file's size one
	// entry of more than 1 MiB may declare (0: DefaultMaxExpansion).
	MaxExpansion float64
}

// Restore verifies the backup archive completely (manifest, every file's
// size and SHA-256, nothing extra or missing) before it writes anything,
// then extracts it into a temporary folder next to dir, opens the restored
// store and checks it (SQLite quick_check, foreign keys, FTS5 integrity),
// and only then moves it into place. dir must not exist or be empty.
func Restore(ctx context.Context, archive, dir string, opts RestoreOptions) (*engine.BackupManifest, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("restore into %s: %w (the folder must be empty or not exist)", dir, engine.ErrExists)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("engine: restore: %w", err)
	}
	maxExp := opts.MaxExpansion
	if maxExp <= 0 {
		maxExp = DefaultMaxExpansion
	}
	m, err := readBackup(ctx, archive, maxExp, nil)
	if err != nil {
		return nil, err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("engine: restore: %w", err)
	}
	if err := checkSpace(parent, m, opts.Config); err != nil {
		return nil, err
	}
	for _, p := range removeStaleIn(parent, restoreTempPrefix(dir)) {
		if opts.Leftover != nil {
			opts.Leftover(p)
		}
	}
	tmp, err := os.MkdirTemp(parent, restoreTempPrefix(dir)+"*")
	if err != nil {
		return nil, fmt.Errorf("engine: restore: %w", err)
	}
	release, err := hold(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("engine: restore: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
		release()
	}()
	n := 0
	if _, err := readBackup(ctx, archive, maxExp, func(f engine.BackupFile, r io.Reader) error {
		n++
		if opts.Progress != nil {
			defer opts.Progress(engine.Progress{Done: int64(n), Total: int64(len(m.Files)), Item: f.Path})
		}
		if f.Path == engine.ConfigFile && !opts.Config {
			return nil
		}
		return extractFile(filepath.Join(tmp, filepath.FromSlash(f.Path)), r)
	}); err != nil {
		return nil, err
	}
	if err := checkRestored(ctx, tmp); err != nil {
		return nil, err
	}
	// Opening may have left a WAL behind; it belongs to the restored db.
	os.Remove(dir) // empty or missing, checked above
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("engine: restore: %w", err)
	}
	ok = true
	if err := syncDir(parent); err != nil {
		return nil, err
	}
	return m, nil
}

// DefaultMaxExpansion bounds how many times the archive's size one entry
// may declare. What cairn archives (SQLite pages, vectors, model weights)
// compresses a few times; an entry a hundred times the whole archive is
// padding (a file of zeros) meant to fill the disk.
const DefaultMaxExpansion = 100

// expansionFloor: entries up to this size are not held to the expansion
// bound (a new store's pages compress well and are small).
const expansionFloor = 1 << 20

// checkExpansion refuses a manifest with an entry of more than
// expansionFloor bytes declaring more than maxExpansion times the archive
// file's size, before anything is decompressed or written.
func checkExpansion(archive string, size int64, m *engine.BackupManifest, maxExpansion float64) error {
	for _, bf := range m.Files {
		if bf.Size > expansionFloor && float64(bf.Size) > maxExpansion*float64(max(size, 1)) {
			return invalid("backup", "%s: entry %s declares %d bytes, %.0f times the archive's %d bytes (limit %g times): not a backup cairn wrote",
				archive, bf.Path, bf.Size, float64(bf.Size)/float64(max(size, 1)), size, maxExpansion)
		}
	}
	return nil
}

// checkSpace refuses a restore (or verify) into dir whose files do not fit
// on its file system, before anything is written.
func checkSpace(dir string, m *engine.BackupManifest, config bool) error {
	avail, ok := diskAvailable(dir)
	if !ok {
		return nil
	}
	var need int64
	for _, bf := range m.Files {
		if bf.Path != engine.ConfigFile || config {
			need += bf.Size
		}
	}
	if need > 0 && uint64(need) > avail {
		return fmt.Errorf("%w: the backup's files need %d bytes, %s has %d available", engine.ErrDiskFull, need, dir, avail)
	}
	return nil
}

// readBackup streams a backup, verifying it against its manifest, and calls
// fn (when not nil) with each file's verified-as-it-streams content. With
// fn nil it only verifies. A mismatch returns ErrCorrupt after fn may have
// seen the bad file's bytes; Restore therefore verifies first with fn nil.
func readBackup(ctx context.Context, archive string, maxExpansion float64, fn func(engine.BackupFile, io.Reader) error) (*engine.BackupManifest, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, fmt.Errorf("engine: backup: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("engine: backup: %w", err)
	}
	zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: backup %s: %w", engine.ErrCorrupt, archive, err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%w: backup %s: %s", engine.ErrCorrupt, archive, fmt.Sprintf(format, args...))
	}
	hdr, err := tr.Next()
	if err != nil {
		return nil, corrupt("no manifest: %v", err)
	}
	if hdr.Name != ManifestName || hdr.Size > 16<<20 {
		return nil, corrupt("first entry is %q, not the manifest", hdr.Name)
	}
	var mb bytes.Buffer
	if _, err := io.Copy(&mb, tr); err != nil {
		return nil, corrupt("manifest: %v", err)
	}
	var m engine.BackupManifest
	if err := json.Unmarshal(mb.Bytes(), &m); err != nil || m.Magic != backupMagic {
		return nil, corrupt("not a cairn backup manifest")
	}
	if m.Version > backupVersion || m.Version < 1 {
		return nil, fmt.Errorf("%w: backup %s has format version %d, this cairn reads versions up to %d", engine.ErrIncompatibleFormat, archive, m.Version, backupVersion)
	}
	if m.EngineFormat > FormatVersion() {
		return nil, fmt.Errorf("%w: backup %s holds a database of format %d, this cairn reads up to %d", engine.ErrIncompatibleFormat, archive, m.EngineFormat, FormatVersion())
	}
	seen := map[string]bool{}
	for _, bf := range m.Files {
		if !filepath.IsLocal(filepath.FromSlash(bf.Path)) || bf.Path != path.Clean(bf.Path) || seen[bf.Path] || bf.Size < 0 || len(bf.SHA256) != 64 {
			return nil, corrupt("manifest entry %q is not a safe, unique relative path with a size and checksum", bf.Path)
		}
		if !restorable(bf.Path) {
			return nil, corrupt("unexpected entry %q (a backup holds %s, %s/, %s and models/ only)", bf.Path, DBFile, VectorsDir, engine.ConfigFile)
		}
		seen[bf.Path] = true
	}
	if !seen[DBFile] {
		return nil, corrupt("no %s: not a backup of a cairn data dir", DBFile)
	}
	if err := checkExpansion(archive, fi.Size(), &m, maxExpansion); err != nil {
		return nil, err
	}
	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			if i != len(m.Files) {
				return nil, corrupt("%d of %d files present", i, len(m.Files))
			}
			break
		}
		if err != nil {
			return nil, corrupt("%v", err)
		}
		if i >= len(m.Files) {
			return nil, corrupt("unexpected entry %q", hdr.Name)
		}
		want := m.Files[i]
		if hdr.Name != want.Path || hdr.Typeflag != tar.TypeReg || hdr.Size != want.Size {
			return nil, corrupt("entry %d is %q (%d bytes), manifest says %q (%d bytes)", i, hdr.Name, hdr.Size, want.Path, want.Size)
		}
		h := sha256.New()
		r := io.TeeReader(tr, h)
		if fn != nil {
			if err := fn(want, r); err != nil {
				return nil, fmt.Errorf("engine: restore %s: %w", want.Path, err)
			}
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			return nil, corrupt("%s: %v", want.Path, err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != want.SHA256 {
			return nil, corrupt("%s: checksum %s, manifest says %s", want.Path, got, want.SHA256)
		}
	}
	return &m, nil
}

// vectorsSource returns the snapshot source of the data dir's vector
// store, or nil when there is none or a caller's source covers it. Message
// vectors deleted between the SQLite copy and the vector copy are missing
// from the restored vector store while their messages are not; `cairn
// check` reports such messages and `cairn rebuild` re-embeds them.
func (bk *Store) vectorsSource(ctx context.Context, given []engine.SnapshotSource) (*engine.SnapshotSource, error) {
	rel := VectorsDir + "/" + vecstore.FileName
	for _, s := range given {
		if s.Path == rel {
			return nil, nil
		}
	}
	dir := filepath.Join(bk.dir, VectorsDir)
	if _, err := os.Stat(filepath.Join(dir, vecstore.FileName)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("engine: backup: %w", err)
	}
	return &engine.SnapshotSource{Path: rel, Write: func(ctx context.Context, w io.Writer) error {
		// The engine's own store when it is open: a second Store in the
		// same process would replay its writes and load its collections again.
		if st := bk.VectorStore(); st != nil {
			_, err := st.WriteSnapshot(ctx, w)
			return err
		}
		st, err := vecstore.Open(ctx, dir, vecstore.Options{Logger: bk.opts.Logger})
		if err != nil {
			return err
		}
		defer st.Close()
		_, err = st.WriteSnapshot(ctx, w)
		return err
	}}, nil
}

// syncDir fsyncs the folder dir, so that a rename in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err == nil {
		err = d.Sync()
		d.Close()
	}
	if err != nil {
		return fmt.Errorf("engine: fsync %s: %w", dir, err)
	}
	return nil
}
