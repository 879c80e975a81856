package vecstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// File names inside the store directory.
const (
	dbFileName   = "vectors.db"
	seqFileName  = "vectors.seq"
	lockFileName = "vectors.lock"
)

// Store is a set of Chroma-compatible collections persisted in one bbolt
// file. It is safe for concurrent use by several goroutines, and several
// processes may open the same directory at once (see doc.go).
type Store struct {
	dir     string
	path    string
	seqPath string
	opts    Options
	log     *slog.Logger

	// ioMu serializes this process's use of the bbolt file (bbolt takes a
	// file lock per open, shared for readers and exclusive for writers).
	// Lock order: ioMu before mu.
	ioMu sync.Mutex

	mu struct {
		sync.RWMutex
		closed  bool
		closing bool                 // Close is waiting for background loads
		applied uint64               // last global sequence reflected in memory
		infos   map[string]*collInfo // every collection, by id
		colls   map[string]*memColl  // collections loaded in memory, by id
	}

	stats struct {
		syncs, reloads, snapshots, exact, hnsw, inPlace atomic.Uint64
	}
	// wrote: a write of this process (writeOp, deleteOp) committed.
	wrote atomic.Bool
	// loading: collections whose background load was started
	// (Options.LoadInBackground); loads counts the loads running.
	loading sync.Map
	loads   sync.WaitGroup

	// views: what each collection was last read in place with
	// (collection id -> *lastView), whose centroid tables the next read
	// of the same snapshot reuses.
	views sync.Map
}

// Open opens (creating if needed) the store in directory dir. The directory
// holds vectors.db (bbolt) and vectors.seq (the change-sequence hint).
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := opts
	if o.LockTimeout == 0 {
		o.LockTimeout = 30 * time.Second
	}
	if o.SnapshotMinOps == 0 {
		o.SnapshotMinOps = 2000
	}
	if o.SnapshotRatio == 0 {
		o.SnapshotRatio = 0.1
	}
	if o.ExactMax == 0 {
		o.ExactMax = 2048
	}
	if o.ExactRatio == 0 {
		o.ExactRatio = 0.02
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.BeamFactor == 0 {
		o.BeamFactor = 2
	}
	if o.LockTimeout < 0 || o.SnapshotMinOps < 0 || o.SnapshotRatio < 0 || o.ExactMax < 0 ||
		o.ExactRatio < 0 || o.IndexWorkers < 0 || o.BeamFactor < 0 {
		return nil, fmt.Errorf("vecstore: invalid options: negative value")
	}
	lg := o.Logger
	if lg == nil {
		lg = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("vecstore: create directory: %w", err)
	}
	s := &Store{dir: dir, path: filepath.Join(dir, dbFileName), seqPath: filepath.Join(dir, seqFileName),
		opts: o, log: lg}
	s.mu.infos = make(map[string]*collInfo)
	s.mu.colls = make(map[string]*memColl)
	// A file already laid out, with a current sequence hint, is only read:
	// opening the store for a search makes no durable write.
	if ok, err := s.openReadOnly(ctx); err != nil || ok {
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	// Initialize (or check) the file under the exclusive lock.
	err := s.update(ctx, func(tx *bolt.Tx) error {
		if err := initLayout(tx); err != nil {
			return err
		}
		return s.syncLocked(tx, true)
	}, func() {
		// Refresh the hint under the exclusive lock (it may be missing, or
		// stale after a writer died between its commit and the hint).
		if seq, ok := s.readSeqFile(); !ok || seq != s.mu.applied {
			s.writeSeqFile(s.mu.applied)
		}
	}, false)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// openReadOnly loads the store's state in a read transaction when the file
// exists with its whole layout and the sequence hint is current; ok=false
// means Open must initialize or repair under the exclusive lock.
func (s *Store) openReadOnly(ctx context.Context) (ok bool, err error) {
	if fi, err := os.Stat(s.path); err != nil || fi.Size() == 0 {
		return false, nil // new (bbolt lays out an empty file)
	}
	err = s.view(ctx, func(tx *bolt.Tx) error {
		if !laidOut(tx) {
			return nil
		}
		// A reader checks the header as the writer's first transaction
		// does: a damaged file is refused by every command alike.
		if err := checkFormat(tx); err != nil {
			return err
		}
		if err := s.syncLocked(tx, true); err != nil {
			return err
		}
		seq, hint := s.readSeqFile()
		ok = hint && seq == s.mu.applied
		return nil
	})
	return ok, err
}

// laidOut reports whether initLayout would change nothing.
func laidOut(tx *bolt.Tx) bool {
	if tx.Bucket(bktMeta) == nil {
		return false
	}
	for _, name := range [][]byte{bktTenants, bktDatabases, bktColls, bktCollNames} {
		if tx.Bucket(name) == nil {
			return false
		}
	}
	return tx.Bucket(bktTenants).Get([]byte(chroma.DefaultTenant)) != nil
}

// initLayout creates the top-level buckets and checks magic and version.
func initLayout(tx *bolt.Tx) error {
	meta := tx.Bucket(bktMeta)
	if meta == nil {
		var err error
		if meta, err = tx.CreateBucket(bktMeta); err != nil {
			return err
		}
		if err := meta.Put(keyMagic, []byte(formatMagic)); err != nil {
			return err
		}
		if err := meta.Put(keyVersion, u32(writeVersion)); err != nil {
			return err
		}
		if err := meta.Put(keySeq, u64(0)); err != nil {
			return err
		}
	}
	if err := checkFormat(tx); err != nil {
		return err
	}
	for _, name := range [][]byte{bktTenants, bktDatabases, bktColls, bktCollNames} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	ten := tx.Bucket(bktTenants)
	if ten.Get([]byte(chroma.DefaultTenant)) == nil {
		if err := ten.Put([]byte(chroma.DefaultTenant), []byte("{}")); err != nil {
			return err
		}
		key := dbKey(chroma.DefaultTenant, chroma.DefaultDatabase)
		if err := tx.Bucket(bktDatabases).Put(key, []byte(`{"id":"00000000-0000-0000-0000-000000000000"}`)); err != nil {
			return err
		}
	}
	return nil
}

// checkFormat verifies the magic and the format version.
func checkFormat(tx *bolt.Tx) error {
	meta := tx.Bucket(bktMeta)
	if meta == nil {
		return corruptf(nil, "missing meta bucket (not a vecstore file?)")
	}
	if m := meta.Get(keyMagic); string(m) != formatMagic {
		return corruptf(nil, "bad magic %q", m)
	}
	v := meta.Get(keyVersion)
	if len(v) != 4 {
		return corruptf(nil, "bad format version field")
	}
	if ver := binary.BigEndian.Uint32(v); ver < minFormatVersion || ver > formatVersion {
		return &chroma.Error{Class: chroma.ErrIncompatibleFormat, Rule: chroma.RuleFormat, Value: strconv.FormatUint(uint64(ver), 10),
			Reason: fmt.Sprintf("file format version %d is not supported (this build reads versions %d to %d)", ver, minFormatVersion, formatVersion)}
	}
	if len(meta.Get(keySeq)) != 8 {
		return corruptf(nil, "bad sequence field")
	}
	return nil
}

// upgradeFormat marks a version-1 file as version 2 in the first
// transaction that writes records, collections or snapshots. Version 2 only adds forms that version 1 readers cannot read
// (snapshots without vectors, SQ8 vectors); everything version 1 wrote stays
// valid and is read as it is (its snapshots carry their vectors and are
// replaced by the next snapshot).
func upgradeFormat(tx *bolt.Tx) error { return raiseFormat(tx, writeVersion) }

// raiseFormat marks the file version ver unless it is newer already.
func raiseFormat(tx *bolt.Tx, ver uint32) error {
	meta := tx.Bucket(bktMeta)
	if meta == nil {
		return nil // Open's first transaction lays the file out
	}
	if v := meta.Get(keyVersion); len(v) == 4 && binary.BigEndian.Uint32(v) < ver {
		return meta.Put(keyVersion, u32(ver))
	}
	return nil
}

func dbKey(tenant, db string) []byte { return []byte(tenant + "\x00" + db) }

func nameKey(tenant, db, name string) []byte { return []byte(tenant + "\x00" + db + "\x00" + name) }

// Close releases the store. It writes a graph snapshot for collections this
// process changed since their last snapshot, so that the next cold open does
// not re-insert them, and compacts the file when more than a tenth of it
// is free pages. Close is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	s.mu.closing = true
	s.mu.Unlock()
	s.loads.Wait()
	s.ioMu.Lock()
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		s.ioMu.Unlock()
		return nil
	}
	todo := s.changedLocked()
	s.mu.Unlock()
	s.ioMu.Unlock()
	var errs []error
	for _, mc := range todo {
		if err := s.snapshot(context.Background(), mc.info.ID); err != nil {
			errs = append(errs, err)
		}
	}
	s.ioMu.Lock()
	// A reader of a store it may not write (another user's, a read-only
	// mount) leaves compacting to its owner.
	if err := s.compactLocked(context.Background(), compactMinBytes); err != nil && !(len(todo) == 0 && errors.Is(err, os.ErrPermission)) {
		errs = append(errs, err)
	}
	s.mu.Lock()
	s.mu.closed = true
	s.mu.colls = nil
	s.mu.Unlock()
	s.ioMu.Unlock()
	return errors.Join(errs...)
}

// changedLocked returns the collections whose snapshot a process that
// closes should write: those it changed since their last snapshot, and,
// when it wrote, those whose snapshot is in an older form (rewritten raw
// for one-shot readers; a process that only read writes nothing).
// REQUIRES: s.mu held.
func (s *Store) changedLocked() []*memColl {
	var todo []*memColl
	for _, mc := range s.mu.colls {
		if mc.graph != nil && (mc.info.OpsSinceSnap > 0 || (!mc.info.SnapRaw && s.wrote.Load())) {
			todo = append(todo, mc)
		}
	}
	return todo
}

// snapshotChanged writes the snapshots changedLocked names.
func (s *Store) snapshotChanged(ctx context.Context) error {
	s.mu.RLock()
	todo := s.changedLocked()
	s.mu.RUnlock()
	for _, mc := range todo {
		if err := s.snapshot(ctx, mc.info.ID); err != nil && err != errNoSnapshotNeeded {
			return err
		}
	}
	return nil
}

// pageSize is the bbolt page size of new files: 16 KiB pages hold ten
// 384-dimension vectors with little waste (existing files keep theirs).
const pageSize = 16 << 10

// fillBuckets sets the highest fill percent on buckets whose keys are
// mostly appended in order (dense ids, sequences), so that pages are split
// only when full: ten 384-dimension float32 vectors (1,560 bytes with their
// element header) fill a 16 KiB page to 95%, where a 0.9 fill would split
// at nine.
func fillBuckets(bs ...*bolt.Bucket) {
	for _, b := range bs {
		if b != nil {
			b.FillPercent = 1
		}
	}
}

// openDB opens the bbolt file for one transaction.
func (s *Store) openDB(readOnly bool) (*bolt.DB, error) {
	db, err := bolt.Open(s.path, 0o600, &bolt.Options{Timeout: s.opts.LockTimeout, ReadOnly: readOnly,
		FreelistType: bolt.FreelistMapType, PageSize: pageSize})
	if err != nil {
		var pe *fs.PathError
		if !errors.Is(err, berrors.ErrTimeout) && !errors.As(err, &pe) {
			// ErrInvalid, ErrChecksum, ErrVersionMismatch, "file size too small", ...
			return nil, corruptf(err, "cannot open %s", s.path)
		}
		return nil, fmt.Errorf("vecstore: open %s: %w", s.path, err)
	}
	db.AllocSize = allocSize
	if fi, err := os.Stat(s.path); err == nil {
		db.AllocSize = growStep(fi.Size())
	}
	return db, nil
}

// allocSize is the most the file grows by past its pages in use. bbolt's
// default, 16 MiB, is a fifth of a 100,000-vector SQ8 store; at 1 MiB a
// write grows the file at most once more than it must, and the file stays
// within 1 MiB of its data.
const allocSize = 1 << 20

// growStep is the step in which a file of size bytes grows: an eighth of
// it, from 64 KiB to allocSize, so that a small store (a few thousand
// vectors) does not carry a mebibyte of slack after each write, while
// growing geometrically keeps the number of grows (each a truncate and an
// fsync) logarithmic.
func growStep(size int64) int {
	return int(min(max(size/8, 64<<10), allocSize))
}

// guard converts a panic inside bbolt (a damaged page) into ErrCorrupt.
// Callers also set debug.SetPanicOnFault so that a damaged page pointer
// that faults in the mmap panics (and is recovered) instead of crashing.
func guard(err *error) {
	if r := recover(); r != nil {
		*err = corruptf(fmt.Errorf("panic: %v\n%s", r, debug.Stack()), "damaged database file; run Repair")
	}
}

// update runs fn in a read-write transaction under the exclusive file lock.
// REQUIRES: s.ioMu held by the caller or not needed (Open).
// afterCommit, if not nil, runs after a successful commit while the lock is
// still held. With scrub, the pages the commit freed are zeroed before
// afterCommit (scrubFreePages): fn deleted something.
func (s *Store) update(ctx context.Context, fn func(tx *bolt.Tx) error, afterCommit func(), scrub bool) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guard(&err)
	if err := ctx.Err(); err != nil {
		return err
	}
	lk, err := lockFile(ctx, filepath.Join(s.dir, lockFileName), true, s.opts.LockTimeout)
	if err != nil {
		return err
	}
	defer lk.unlock()
	db, err := s.openDB(false)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	var late error
	err = db.Update(func(tx *bolt.Tx) error {
		ferr := fn(tx)
		var ce *commitThenFail
		if errors.As(ferr, &ce) {
			late = ce.err
			return nil
		}
		return ferr
	})
	if err == nil && scrub {
		err = scrubFreePages(db, s.path)
	}
	if err == nil && afterCommit != nil {
		afterCommit()
	}
	if err == nil {
		err = late
	}
	return err
}

// commitThenFail makes update commit the transaction and then return err
// (Chroma fixes a collection's dimension even when the batch is refused later).
type commitThenFail struct{ err error }

func (c *commitThenFail) Error() string { return c.err.Error() }

// view runs fn in a read-only transaction under a shared file lock.
func (s *Store) view(ctx context.Context, fn func(tx *bolt.Tx) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guard(&err)
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, statErr := os.Stat(s.path); statErr != nil {
		return fmt.Errorf("vecstore: %w", statErr)
	}
	lk, err := lockFile(ctx, filepath.Join(s.dir, lockFileName), false, s.opts.LockTimeout)
	if err != nil {
		return err
	}
	defer lk.unlock()
	db, err := s.openDB(true)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	return db.View(fn)
}

// readSeqFile returns the sequence hint written by the last writer, or
// ok=false if it is missing or torn.
func (s *Store) readSeqFile() (uint64, bool) {
	b, err := os.ReadFile(s.seqPath)
	if err != nil || len(b) != 16 {
		return 0, false
	}
	a := binary.LittleEndian.Uint64(b)
	c := binary.LittleEndian.Uint64(b[8:])
	if a^0x5eb1ec7ab1e5eed5 != c {
		return 0, false
	}
	return a, true
}

// writeSeqFile publishes seq as the last committed sequence. It runs under
// the exclusive file lock, after the commit and before the write is acknowledged.
func (s *Store) writeSeqFile(seq uint64) {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], seq)
	binary.LittleEndian.PutUint64(b[8:], seq^0x5eb1ec7ab1e5eed5)
	f, err := os.OpenFile(s.seqPath, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		s.log.Warn("vecstore: cannot write sequence hint", "err", err)
		return
	}
	if _, err := f.WriteAt(b[:], 0); err != nil {
		s.log.Warn("vecstore: cannot write sequence hint", "err", err)
	}
	_ = f.Close()
}

func readSeq(tx *bolt.Tx) uint64 {
	return binary.BigEndian.Uint64(tx.Bucket(bktMeta).Get(keySeq))
}

// nextSeq increments and returns the global change sequence.
func nextSeq(tx *bolt.Tx) (uint64, error) {
	seq := readSeq(tx) + 1
	return seq, tx.Bucket(bktMeta).Put(keySeq, u64(seq))
}

// readOp brings memory up to date with the file (when another process wrote,
// or when collection id must be loaded) and then runs fn under the read lock.
// id may be "" when no collection must be loaded.
func (s *Store) readOp(ctx context.Context, id string, fn func() error) error {
	if err := s.refresh(ctx, id); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mu.closed {
		return chroma.ErrClosed
	}
	return fn()
}

// refresh syncs memory with the file if the sequence hint says it changed or
// collection id is not loaded.
func (s *Store) refresh(ctx context.Context, id string) error {
	s.ioMu.Lock()
	defer s.ioMu.Unlock()
	s.mu.RLock()
	closed := s.mu.closed
	applied := s.mu.applied
	_, loaded := s.mu.colls[id]
	_, known := s.mu.infos[id]
	s.mu.RUnlock()
	if closed {
		return chroma.ErrClosed
	}
	if seq, ok := s.readSeqFile(); ok && seq == applied && (id == "" || loaded || !known) {
		return nil
	}
	return s.view(ctx, func(tx *bolt.Tx) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := s.syncLocked(tx, false); err != nil {
			return err
		}
		if id != "" {
			if _, err := s.loadedLocked(tx, id); err != nil && !errors.Is(err, chroma.ErrNotFound) {
				return err
			}
		}
		return nil
	})
}

// writeOp runs fn in a read-write transaction with memory synced and the
// store's write lock held. fn returns a function to run after a successful
// commit (applying the change to memory), or nil.
func (s *Store) writeOp(ctx context.Context, fn func(tx *bolt.Tx) (after func(), err error)) error {
	return s.writeOpScrub(ctx, false, fn)
}

// deleteOp is writeOp for a write that deletes records or collections: the
// pages the commit frees are zeroed before it returns, so an acknowledged
// delete leaves no copy of a document in the file.
func (s *Store) deleteOp(ctx context.Context, fn func(tx *bolt.Tx) (after func(), err error)) error {
	return s.writeOpScrub(ctx, true, fn)
}

func (s *Store) writeOpScrub(ctx context.Context, scrub bool, fn func(tx *bolt.Tx) (after func(), err error)) error {
	// Replay other processes' changes first under a shared lock, so that the
	// exclusive section is short.
	if err := s.refresh(ctx, ""); err != nil {
		return err
	}
	s.ioMu.Lock()
	defer s.ioMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return chroma.ErrClosed
	}
	var after func()
	var newSeq uint64
	committed := false
	publish := func() {
		committed = true
		s.wrote.Store(true)
		if newSeq != 0 {
			s.writeSeqFile(newSeq)
			s.mu.applied = newSeq
		}
	}
	err := s.update(ctx, func(tx *bolt.Tx) error {
		if err := s.syncLocked(tx, false); err != nil {
			return err
		}
		if err := upgradeFormat(tx); err != nil {
			return err
		}
		before := readSeq(tx)
		a, err := fn(tx)
		if seq := readSeq(tx); seq != before {
			newSeq = seq
		}
		after = a
		return err
	}, publish, scrub)
	if committed && after != nil {
		after()
	}
	return err
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
