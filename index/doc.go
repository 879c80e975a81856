// Package index is cairn's approximate nearest-neighbour index: a
// hierarchical navigable small world graph (HNSW, Malkov and Yashunin 2018,
// Algorithms 1, 2 and 4) over dense, caller-assigned uint32 ids.
//
// # Semantics
//
// Distances follow Chroma: Cosine is 1 - cos (vectors are normalized once on
// insert and queries before search, so it is computed as 1 - dot), L2 is the
// squared Euclidean distance, IP is 1 - dot. Options default to M 16 (2*M
// neighbours at layer 0), EfConstruction 200, EfSearch 100; levels are drawn
// with multiplier 1/ln(M) from a generator seeded by Options.Seed, and
// neighbours are chosen with the paper's heuristic (Algorithm 4).
//
// Delete leaves a tombstone that searches walk through but never return.
// Tombstones are unlinked, their neighbours' lists rebuilt by the heuristic
// from the surviving neighbours and the neighbours of the deleted ones, and
// their slots freed: when an insert reuses a deleted id (or replaces a live
// one), when Repair is called, or once tombstones reach a quarter of the
// live vectors. Ids are dense: memory is proportional to the highest id, so
// callers should reuse freed ids.
//
// Filtered search (SearchOptions.Allow) scans the allowed ids exactly when
// they are few (at most 4096) or under a quarter of the live vectors (17%
// when only one core may be used): the scan is memory-bound, so from 8192
// ids it is split across Options.Workers goroutines. Above that it walks
// the graph as without a filter, expanding disallowed nodes but returning
// only allowed ones, until it holds Ef allowed candidates (Ef widened by
// sqrt(0.5 / selectivity) below 50%, which keeps recall at its unfiltered
// level). The thresholds
// were measured at 100,000 x 384 on bench/'s two data sets (the table is
// in search.go; an ACORN-1 style two-hop walk was measured too and lost to
// one of these two paths at every selectivity).
//
// # Layout
//
// Vectors live in one contiguous slab: with the Float32 code (the
// default) a []float32, slot i at i*Dim; with SQ8 a []byte of rows holding
// the vector's offset, step and decoded squared norm (three float32s) and
// Dim 8-bit codes, padded to 4 bytes (396 bytes at dimension 384, against
// 1536). Layer-0 neighbour lists live in one []uint32 (2*M+1 words per
// slot: count, then ids); upper layers in a second flat []uint32 of
// (M+1)-word blocks addressed by a per-slot offset. Distance kernels use
// AVX-512 or AVX2+FMA assembly when the CPU has it (chosen at run time
// through golang.org/x/sys/cpu), else unrolled Go; the purego build tag
// forces the Go kernels. The SQ8 kernel (float32 query times uint8 codes)
// has AVX2 and Go forms only.
//
// # Codes
//
// An SQ8 index keeps no float32 copy of its vectors. Distances are
// asymmetric: the query stays float32 and is compared with each stored
// vector's decoded form, through q·x̂ = lo*sum(q) + step*(q·c), so one pass
// over the codes serves every space. In the cosine space each row's lo and
// step are scaled so that the decoded vector has unit norm: the part of
// the rounding error along the vector then drops out of the distance,
// which for near neighbours (similarity 0.9) more than halves it. Rows
// written unscaled are scaled when loaded; a View takes them as stored, so
// callers store AppendSQ8Unit's form in the cosine space. Links are chosen
// with the inserted vector as the exact query; the neighbour heuristic
// compares decoded vectors. Results' distances are to the decoded
// vectors, and Vector returns the decoded vector. Recode converts an index
// between codes in place, keeping its graph.
//
// SQ8Residual codes each vector's residual to the nearest of 1024
// centroids with SQ8's per-vector range, plus a 2-byte centroid id a row.
// The centroids are trained by k-means on (a sample of) the index's
// vectors once it holds 4096 of them, on the insert that reaches that
// count (an index filled one vector at a time trains too), or at Recode.
// Rows coded before training have no centroid: they are SQ8 rows, and
// Recode from SQ8 keeps every row so, bit for bit (coding a decoded
// vector again would add a second rounding). An insert computes its
// vector's dots with every centroid in one batched kernel pass, which
// both picks the centroid and serves its searches; other queries compute
// q·centroid once per centroid, when first needed. A trained table is
// 8-bit exact (each centroid the decoding of its SQ8 codes), so those dots
// run on its codes with the u8 kernels; a table read from a file that is
// not 8-bit keeps float dots. On clustered data the
// code has about half SQ8's error (residual.go); no vecstore collection
// uses it yet. A caller that stores the rows itself (rows.go) trains the
// table with TrainCentroids, installs the table it keeps with
// SetCentroids, codes vectors with EncodeRow and gives rows back as stored
// (InsertRows, UnmarshalGraphRows; AppendRow reads one): a decoded row
// coded again need not give the same row.
//
// # Reading in place
//
// View searches the output of MarshalGraph where it lies (a memory-mapped
// file) without decoding it: OpenView checks the checksum and notes where
// each slot starts, and Search walks the graph like Index.Search without a
// filter, reading only the lists it visits and asking the caller for each
// visited vector in its stored form. It serves processes that answer one
// query and exit.
//
// # Concurrency
//
// All methods are safe for concurrent use. Searches run in parallel with
// each other and with inserts: neighbour lists are read and written with
// atomic loads and stores (a search may see a list mid-update, which only
// costs accuracy, never safety), and list writers take a striped lock.
// Mutations (Insert, InsertBatch, Delete, Repair, Recode, MarshalBinary) are
// serialized by one mutex; InsertBatch and repairs fan out over
// Options.Workers goroutines. Growing the slabs and reusing slots takes an
// exclusive lock briefly, waiting for searches in flight. Lock order:
// writeMu, then mu, then a node's striped lock (never two node locks).
//
// # Format
//
// MarshalBinary writes format version 3 (version 4, which adds the
// centroid table, for SQ8Residual only): magic "CAIRNHNS", version, the
// options (the code included), flags, the level generator's position, the
// slot count and entry point, then each slot (state, level, vector as
// float32s or as SQ8 offset, step and codes, neighbour lists), then a
// CRC-32C of everything before it (the layout is spelled out in
// marshal.go). MarshalGraph writes the same without the vectors (flag bit
// 0), for callers that keep the vectors themselves so that they are
// stored once; UnmarshalGraph takes them back through a callback (AppendSQ8
// and DecodeSQ8 are the SQ8 form such callers store). Unmarshal reads
// versions 1 (float32 only, no code field), 2 (no flags field), 3 and 4,
// returns ErrUnsupportedVersion for newer data and ErrCorrupt for anything
// damaged or inconsistent, and never panics. testdata/v1.bin,
// v2-float32.bin, v2-sq8.bin, v3-float32.bin, v3-sq8-graph.bin and
// v4-sq8r.bin are frozen fixtures. A View of SQ8Residual takes the centroid
// table from the data and each row as AppendRow gives it.
//
// # Imports
//
// index imports only the standard library and golang.org/x/sys/cpu; it must
// not import bbolt, database/sql, hugot or any cairn package.
package index
