package vecstore

import (
	"log/slog"
	"time"

	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// A Store is a chroma.Store: the model's operations over one bbolt file.
var _ chroma.Store = (*Store)(nil)

// Options configures a Store. The zero value gives the defaults.
type Options struct {
	// Logger receives warnings (e.g. a skipped snapshot). Nil discards.
	Logger *slog.Logger
	// LockTimeout bounds the wait for the file lock held by another process
	// (default 30s). Exceeding it returns an error wrapping bbolt's timeout.
	LockTimeout time.Duration
	// SnapshotMinOps and SnapshotRatio decide when a collection's graph is
	// snapshotted: once the records written since the last snapshot exceed
	// max(SnapshotMinOps, SnapshotRatio * collection size). Defaults 2000,
	// 0.1: a collection growing from empty to n records in batches
	// serializes about 11n records of snapshots in total (5n at 0.25, about
	// 2.5% less add CPU at 100,000), and a process loading it without a
	// fresh snapshot (after a crash, or one written by another process)
	// re-inserts at most a tenth of it (a quarter at 0.25).
	SnapshotMinOps int
	SnapshotRatio  float64
	// ExactMax and ExactRatio: the planner scans a whole collection of at
	// most ExactMax records (default 2048) exactly, even unfiltered, and
	// always scans the allowed set
	// exactly when it has at most ExactMax records or is a
	// smaller fraction than ExactRatio of the collection (default 0.02).
	// Above that it scans exactly while its cost model says the scan is
	// cheaper than a filtered walk (about 25% selectivity at 100,000
	// records with the default HNSW parameters), and otherwise hands the
	// query to index.Search, which picks its exact scan or filtered walk.
	// DelegateFiltered skips the cost model and lets index.Search decide
	// above ExactMax / ExactRatio (BenchmarkFiltered compares the two).
	// A where_document filter is always scanned exactly up to 30%.
	ExactMax         int
	ExactRatio       float64
	DelegateFiltered bool
	// BeamFactor multiplies a collection's ef_search to give the candidate
	// list its queries search with (default 2; 1 searches exactly as
	// configured, as Chroma does). ef_search keeps its meaning as the knob
	// (the beam grows and shrinks with it) and is echoed as configured.
	// Why 2: recall@10 is a promise here (≥ 0.95 at every selectivity),
	// and at Chroma's default ef_search 100 an HNSW graph reaches only
	// 0.936 on data of intrinsic dimension 32 (BenchmarkStore; Chroma's
	// own hnswlib gives 0.935 on the same data). Twice the beam gives
	// 0.986 for about 0.26 ms more per query, still a third of Chroma's
	// latency through HTTP. SQ8 collections search with 1.5 times this
	// beam (their codes reorder near neighbours; see sq8Beam).
	BeamFactor float64
	// Seed seeds the graphs' level generators (0 means 1).
	Seed int64
	// IndexWorkers caps the goroutines used by batch graph inserts (0 = GOMAXPROCS).
	IndexWorkers int
	// AllowReset enables Store.Reset (Chroma's allow_reset).
	AllowReset bool
	// ResetKeeps names databases of the default tenant that Reset leaves
	// in place with their collections: another owner's data in the same
	// store (cairn's engine keeps its message vectors there).
	ResetKeeps []string
	// OneShot is for a process that makes a few reads and exits (a CLI
	// command): a Query without filters and a Get by ids alone, of a
	// collection not loaded yet, are answered from the file where it lies
	// instead of loading the collection (inplace.go), and Close leaves
	// snapshots in older forms as they are (a reader writes nothing).
	// Writes still work and load the collection.
	OneShot bool
	// LoadInBackground is for a long-lived process (a server): the first
	// read of a collection starts loading it in the background, and the
	// reads that arrive before it is loaded are answered in place as with
	// OneShot when they can be, so a cold open does not wait for the load.
	// Close waits for a load in progress.
	LoadInBackground bool
}

// Stats reports counters of a Store (for Stats methods of callers).
type Stats struct {
	Collections  int    // collections loaded in memory
	Records      int    // records loaded in memory
	AppliedSeq   uint64 // last change-log sequence applied by this process
	Syncs        uint64 // change-log replays from other processes
	FullReloads  uint64 // collections reloaded from their snapshot
	Snapshots    uint64 // graph snapshots written by this process
	ExactQueries uint64 // queries vecstore answered by exact scan
	FilteredHNSW uint64 // queries handed to index.Search (which itself scans exactly small filtered sets)
	InPlaceReads uint64 // queries and gets answered from the file in place (Options.OneShot)
}
