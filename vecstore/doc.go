// Package vecstore is cairn's Chroma: collections of records (id, embedding,
// document, uri, metadata) with Chroma 1.0.0's semantics (the model of
// package vecstore/chroma, whose Store it implements), filtered nearest
// neighbour search over an HNSW graph per collection (package index), and
// persistence in one bbolt file that several processes share.
//
// # API
//
// Open(ctx, dir, Options) returns a *Store; Close is idempotent. Tenants and
// databases (default_tenant/default_database exist from the start),
// collections (CreateCollection with get-or-create, GetCollection by name,
// GetCollectionByID, ListCollections, CountCollections, ModifyCollection,
// DeleteCollection) and records (Add, Upsert, Update, Get, Query, Delete,
// Count, Peek) follow Chroma's HTTP API v2 one to one, so the Chroma adapter
// is a thin JSON layer: the request structs (package chroma) mirror the
// bodies, GetResult and QueryResult keep Chroma's null-versus-empty
// distinctions (nil = JSON null), and every refusal is a *chroma.Error
// whose Class is one of chroma's Err* sentinels and whose Rule, Field and
// values say what was refused (the rules are chroma's, applied here); the
// adapter maps classes to statuses and words rules in Chroma's text (no
// wire text lives here). Known, deliberate divergences from Chroma 1.0.0:
//   - renaming a collection onto an existing name gives ErrExists (Chroma: 500);
//   - regular expressions are Go's RE2 (package where), so the detail of an
//     invalid-pattern error is Go's, not Rust's;
//   - HNSW parameters out of the index's range (ef < 1, max_neighbors < 2)
//     are refused at create time;
//   - vectors with NaN or infinite components are refused (JSON cannot carry
//     them, so only Go callers can hit this).
//
// Kept on purpose for compatibility: a float operand is truncated toward
// zero when compared with int-typed metadata values (Chroma 1.0.0 bug, see
// metaindex.go), an unknown id in a query's ids filter is refused
// (RuleUnknownID; Chroma answers "Error finding id"), a refused first
// batch may still fix the dimension.
//
// Besides Chroma's checks, each collection records the embedding model id of
// its vectors (Model) and its dimension; a write or query carrying another
// model (or none, when the collection has one) fails with
// ErrEmbedderMismatch, a wrong length with ErrDimensionMismatch.
//
// # Where filters and planning
//
// Filters are trees of package where (where.Parse, where.ParseDocument, or
// its Eq, In, And, ... constructors); a request's trees are validated again
// here, and a refusal wraps the *where.Error (RuleFilter). Evaluation is filter first: a per-collection
// inverted index (roaring bitmaps per string and bool value, sorted
// (value, id) arrays for ints and floats, all keyed by the dense uint32 ids
// that are also the graph's ids) yields the allowed set; documents are then
// scanned only within it. The planner scans the allowed set exactly when
// it holds at most k or Options.ExactMax records, less than
// Options.ExactRatio of the collection, when its cost model says so (an
// exact scan computes card distances, a filtered walk about ef x 2M /
// selectivity: exact while card^2 <= ef x 2M x n, about 25% selectivity at
// 100,000 records with the defaults; Options.DelegateFiltered turns the
// cost model off), or for a where_document filter up to 30%; otherwise it
// hands the allowed set to index.Search, which picks its exact scan (split
// across cores) or its filtered walk; the walk keeps expanding until it
// holds ef allowed candidates. BenchmarkFiltered measures both policies on the same store.
//
// The candidate list (ef) of every query is Options.BeamFactor (default 2)
// times the collection's ef_search: ef_search stays the knob and is echoed
// as configured, but cairn promises recall@10 ≥ 0.95 at every selectivity,
// which Chroma's default of 100 misses on data of intrinsic dimension 32
// (0.936, the same as Chroma's own hnswlib on that data; 0.986 at 200).
// SQ8 and sq8r collections widen it 1.5x more (sq8Beam, measured in bench/README.md).
//
// # Vector codes
//
// A collection stores its vectors as float32 (the default: Get returns
// exactly the floats written) or, when created with the metadata key
// "cairn:vector_code": "sq8" (MetaVectorCode, cairn's extension to Chroma's
// configuration, read once at creation like the legacy "hnsw:*" keys), as
// 8-bit codes with a per-vector offset and step (index.SQ8): 392 bytes per
// vector at dimension 384 against 1,536, on disk and in the graph, Get
// returning the decoded vector. Recode converts an existing collection in
// one transaction, keeping its graph. "cairn:vector_code": "sq8r"
// (index.SQ8Residual) codes each vector's residual from the nearest of
// 1,024 centroids instead: 398 bytes per vector at dimension 384 and
// distances nearer float32's than SQ8's. The centroids are trained by the
// write that brings the collection to index.TrainRows (4,096) vectors, in
// its transaction, on every vector the collection then holds, and stored
// with it in 8 bits (401 KB at dimension 384); the rows written before
// keep no centroid (they are SQ8 codes), so Recode from SQ8 to sq8r keeps
// every code as it is. A row depends on the table it was coded against,
// so every path that hands vectors to the graph (a write, replaying
// another process's writes, loading, Repair) hands it the rows as stored
// (graphVec), never their decoded vectors. The centroids are not
// retrained as the collection grows. The engine's message collections use
// SQ8 (their vectors can be recomputed from the messages).
//
// Dense ids are assigned by vecstore, lowest free first, so ids
// freed by deletes are reused.
//
// # File layout (format version 3; 4 once a file holds an sq8r collection)
//
// DIR/vectors.db is a bbolt file:
//
//	meta        magic "cairn-vecstore\x00", version (u32 BE, 3 or 4), seq (u64 BE:
//	            global change sequence, +1 per committed write)
//	tenants     name -> "{}"
//	databases   tenant\x00name -> {"id": uuid}
//	collections uuid -> CRC-32C(u32 BE) + JSON collInfo (name, metadata,
//	            config, dimension, model, next insertion order, last seq,
//	            snapshot seq/length/CRC/chunk count, ops since snapshot)
//	collnames   tenant\x00database\x00name -> uuid
//	c:<uuid>    rec:  id -> CRC + record (version byte, dense u32, order u64,
//	                  vector seq u64, vector norm f32, flags, document, uri,
//	                  typed metadata)
//	            vec:  dense u32 BE -> CRC + the vector: little-endian
//	                  float32s as given, or for SQ8 collections
//	                  index.AppendSQ8's lo, step and codes
//	                  (AppendSQ8Unit of the normalized vector, in the
//	                  cosine space: the same layout, lo and step scaled
//	                  so the decoded vector has unit norm), or for sq8r
//	                  collections the row index.AppendRow gives without
//	                  its t field (lo, step f32, centroid u16 with 0xFFFF
//	                  for none, codes: index.RowLen(dim)-4 bytes; t is
//	                  computed back on read, see expandRow)
//	            cent: (a key, sq8r collections once trained) CRC + the
//	                  centroid table, each centroid as AppendSQ8 lays
//	                  out a vector (index.AppendCentroidTable: decodes
//	                  to the table the rows were coded against exactly)
//	            log:  seq u64 BE -> CRC + ids touched by that write
//	            snap: chunk 0 -> index.MarshalGraph of the graph as of
//	                  snapshot seq, uncompressed, in one value (no
//	                  vectors: they are read from vec), so that it lies
//	                  contiguous in the mapped file and is searched
//	                  there (collInfo.SnapRaw); "ids" -> CRC + the
//	                  record id of each dense id at that seq;
//	                  "meta" -> CRC + the metadata postings at that
//	                  seq (each key's string and bool values and the
//	                  roaring bitmap of dense ids holding each, see
//	                  postings.go); for sq8r, "rowt" -> CRC + each
//	                  row's t at that seq (expandRow's, so that a
//	                  read in place copies it instead). Both are
//	                  derived, written with the snapshot into the
//	                  bucket every snapshot write empties, and carry
//	                  its seq; a snapshot without them (written
//	                  before they existed) is read as before, and
//	                  the next snapshot adds them.
//	                  Snapshots of version 2 (and Recode, Repair) are
//	                  chunk u32 BE -> 4 MiB pieces of the zstd-compressed
//	                  graph.
//
// Every value we lay out carries a CRC-32C; the magic and version are
// checked on every open and every transaction, a newer version gives
// ErrIncompatibleFormat naming it, and any damage (bad CRC, missing chunk,
// undecodable graph, bbolt panic on a damaged page, which is recovered)
// gives ErrCorrupt (collections load lazily, so the error shows on the
// first use of the damaged collection). Repair copies every readable
// record whose record and vector pass their checks into a fresh file
// (recovering from bbolt panics page by page), rebuilds each graph from the
// stored vectors, writes fresh snapshots and swaps the file in (the old one
// is kept as vectors.db.bak). testdata/format-v1.db and format-v2.db are
// frozen fixtures opened by TestFrozenFixture and TestFrozenFixtureV2, and
// format-v4.db.zst (sq8r collections, trained and not) by TestFrozenFixtureV4.
// Version 4 adds only sq8r collections: a file is marked 4 when it gets
// one (putCollInfo), so that version 3 readers refuse it instead of
// misreading rows as vectors; other files stay version 3.
//
// Older files are read as they are. Version 2 snapshots are compressed:
// they are decoded on load, and a one-shot store loads the collection
// instead of reading it in place; the first write marks the file version
// 3, and a process that wrote rewrites such a snapshot raw at Close (a
// process that only reads never writes). Version 1 files: their snapshots are
// index.MarshalBinary, vectors included (collInfo.SnapGraph false). The
// first transaction that writes records, collections or a snapshot marks
// the file version 2 (reads never write); each collection's next snapshot
// (after a write, at Close, or Checkpoint) replaces its old one.
//
// DIR/vectors.seq holds a 16-byte hint: the last committed seq and a check
// word. It lets a reader skip opening bbolt when nothing changed.
// DIR/vectors.lock is the inter-process lock file (below). New files use
// 16 KiB bbolt pages and grow past their last page in use by an eighth,
// from 64 KiB to 1 MiB. Compact (which a bulk load calls at its end) and
// Close (past 8 MiB of it) rewrite the file (bbolt.Compact into a temp file
// cut at its last page in use, fsync, rename) when a tenth of it is free
// pages, which snapshot rewrites and many small transactions leave behind,
// or growth slack. Vectors are stored once: the file is about 1.2x the raw
// vector bytes plus the graph at dimension 384 (ten float32 vectors fill a
// 16 KiB page). Version 1 stored them twice (2.2x).
//
// # Reads in place
//
// Loading a collection (records into maps, the metadata index, the graph
// and every vector) takes about a second at 100,000 records. A Store
// opened with Options.OneShot (a CLI command that reads and exits)
// answers a query (without a where filter or with one), and a Get by ids
// alone, without loading: in one read transaction, index.View walks the
// raw snapshot where it lies in bbolt's memory map, each visited vector
// is read from the vec bucket (SQ8 codes used as stored), only the hits'
// records are decoded, and the records written since the snapshot (the
// change log after it) are compared exactly and merged, graph hits whose
// records changed since being dropped. A where filter is evaluated on
// every record's metadata where it lies (only the keys it names are
// decoded) into the allowed set, and the plan of the loaded path is
// followed on its counts: an exact scan of the allowed records' vectors,
// or the graph walk that returns allowed nodes only. A filter of $eq,
// $ne, $in and $nin on strings and bools (under $and and $or) is answered
// instead from the snapshot's metadata postings, the records written
// since evaluated on their own metadata; rows unchanged since the
// snapshot take their t from it; a filtered walk lists the vec bucket's
// values by dense id in one cursor pass rather than looking each visited
// vector up by key. Anything else (ids
// or where_document filters, an unfiltered query of a small collection,
// an older snapshot) loads the collection as before. The Store keeps the
// centroid tables of an sq8r collection it last read in place, decoded,
// and reuses them while the snapshot's bytes are the same (a recall reads
// one collection twice); a Get decoding sq8r rows after a query of the
// same snapshot decodes them with that query's view, without opening the
// graph again. Options.LoadInBackground (the engine's long-lived processes)
// starts loading a collection on its first read and answers reads in
// place until it is loaded, so a cold open does not wait for the load.
// Answers in place equal the loaded path's up to float round-off (SQ8
// distances are to the stored codes, which the loaded graph re-derives;
// cosine codes written before their lo and step were scaled to unit norm
// are scaled by the loaded graph only, a difference of about 1e-4).
//
// # Several processes
//
// Up to 8 processes (each agent's `cairn mcp`) open one directory. bbolt
// holds a file lock for as long as a DB is open, exclusive for writers, so
// no process keeps the file open: every operation takes DIR/vectors.lock
// (flock: shared to read, exclusive to write, blocking in the kernel so
// waiters queue instead of polling like bbolt's 50 ms retry), opens bbolt,
// runs one transaction, closes it and releases the lock.
//
//   - A write opens read-write (exclusive flock, waiting up to
//     Options.LockTimeout), first replays what others wrote (below), then
//     validates against that state, writes records, vectors, the log entry
//     and collection info, bumps seq and commits (bbolt fsyncs), writes the
//     seq hint, and only then releases the lock and returns. Its graph
//     inserts happen after the lock is released.
//   - A read compares the seq hint with the seq its memory reflects; when
//     they differ it opens bbolt read-only (shared flock), replays and
//     closes, then answers from memory.
//   - Replay: for each loaded collection whose last seq moved, the ids named
//     by the log entries after the applied seq are re-read and memory (records,
//     metadata index, graph) is made to agree with them. If the log was
//     trimmed past that point by a snapshot, the collection is reloaded from
//     the snapshot. Collections are loaded lazily on first use.
//   - Snapshots: after a write, once the records written since the last
//     snapshot exceed max(SnapshotMinOps, SnapshotRatio x size), the writer
//     serializes its graph (outside the lock), then in a write transaction
//     stores it if no one wrote to that collection meanwhile and trims the
//     log. Close snapshots collections it changed since their snapshot.
//     Opening a collection loads its records and snapshot and re-inserts
//     only vectors written after the snapshot.
//
// Because every read checks the hint and every write replays under the
// exclusive lock, an acknowledged write is visible to every later operation
// of every process (read-your-writes across processes, not just within 1 s).
//
// # Durability and atomicity
//
// A write returns only after bbolt's commit (fdatasync of the file) under the
// exclusive lock: an acknowledged write survives kill -9 and power loss (to
// the extent the disk honours fsync). Each call is one transaction: after a
// crash at any moment a batch is wholly present or wholly absent, and the
// graph, rebuilt from snapshot + records on open, agrees with the records.
// There is no group commit across calls; batch writes to amortize the fsync.
// A crash between commit and the seq hint update only delays other readers'
// view of that (unacknowledged) write until the next write or reopen.
//
// Deletes (Delete, DeleteCollection, DeleteDatabase, Reset) zero every free
// page of the file after their commit and before they return (bbolt leaves
// the bytes of copied-on-write pages in its free pages), so an acknowledged
// delete leaves no copy of a document in the file, a kill -9 right after
// it included. A document replaced by Update or Upsert is zeroed at the
// next delete or compaction. Files are created 0600 and the dir 0700.
//
// # Concurrency
//
// A Store is safe for concurrent use. Queries from one process run in
// parallel with each other; writes and replays are serialized per process
// (and across processes by the file lock). Lock order: Store.ioMu, then
// Store.mu, then memColl.lazyMu, then the index's own locks.
//
// A where_document scan (its cost is clauses x documents) runs with no
// lock held: the candidates are listed under the shared lock, their
// documents matched without it, and only records written in between are
// matched again under the lock (records are immutable once published; a
// write replaces them), so a costly scan never keeps writers waiting. A
// DocMatcher checks the request's context before every clause, so a scan
// whose client has gone stops within one clause, and bounds the request's
// work by MaxScanBytes (document bytes scanned over all clauses); other
// long loops check the context every cancelEvery records.
//
// # Imports
//
// vecstore imports vecstore/chroma, vecstore/where and index (and bbolt,
// roaring, zstd, uuid); it must not import fts, embed, engine or
// database/sql.
package vecstore
