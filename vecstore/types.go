package vecstore

import (
	"encoding/json"
	"log/slog"
	"time"

	"github.com/cairn-dev/cairn/vecstore/where"
)

// Default tenant and database, created by Open.
const (
	DefaultTenant   = "default_tenant"
	DefaultDatabase = "default_database"
)

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

// Space is a collection's distance function, with Chroma's names and formulas:
// "l2" squared Euclidean, "ip" 1 − dot, "cosine" 1 − cosine similarity.
type Space string

const (
	SpaceL2     Space = "l2"
	SpaceIP     Space = "ip"
	SpaceCosine Space = "cosine"
)

// HNSWConfig is a collection's HNSW configuration (what Chroma echoes in
// configuration_json.hnsw). Its JSON form is part of the file format: the
// collections bucket stores it inside collInfo.
type HNSWConfig struct {
	Space          Space   `json:"space"`
	EfConstruction int     `json:"ef_construction"`
	EfSearch       int     `json:"ef_search"`
	MaxNeighbors   int     `json:"max_neighbors"`
	ResizeFactor   float64 `json:"resize_factor"`
	SyncThreshold  int     `json:"sync_threshold"`
	// VectorCode is how the vectors are stored ("" = CodeFloat32), chosen
	// at creation through the MetaVectorCode metadata key.
	VectorCode VectorCode `json:"cairn_vector_code,omitempty"`
}

// DefaultHNSWConfig returns Chroma 1.0.0's defaults.
func DefaultHNSWConfig() HNSWConfig {
	return HNSWConfig{Space: SpaceL2, EfConstruction: 100, EfSearch: 100, MaxNeighbors: 16,
		ResizeFactor: 1.2, SyncThreshold: 1000}
}

// HNSWParams is the hnsw part of a create or modify request. Nil fields are
// omitted (defaults on create, unchanged on modify). Space and EfConstruction
// cannot be modified (Chroma answers 422).
type HNSWParams struct {
	Space          *Space
	EfConstruction *int
	EfSearch       *int
	MaxNeighbors   *int
	NumThreads     *int
	ResizeFactor   *float64
	SyncThreshold  *int
	BatchSize      *int
}

// SPANNParams is the spann part of a create request. On single-node Chroma only
// its space is used (the collection becomes hnsw).
type SPANNParams struct {
	Space *Space
}

// CollectionConfig is the stored configuration of a collection (its JSON
// form is part of the file format, as HNSWConfig's).
type CollectionConfig struct {
	HNSW HNSWConfig `json:"hnsw"`
	// EmbeddingFunction is stored opaquely and echoed back (Chroma's
	// configuration_json.embedding_function); nil means JSON null.
	EmbeddingFunction json.RawMessage `json:"embedding_function"`
}

// Collection describes a collection.
type Collection struct {
	ID       string // UUID v4, lower-case hyphenated
	Name     string
	Tenant   string
	Database string
	Metadata Metadata // nil when empty
	Config   CollectionConfig
	// Dimension is 0 until the first write carrying an embedding fixes it
	// (Chroma's "dimension": null).
	Dimension int
	// Model is the embedding model id the collection's vectors come from; ""
	// means vectors supplied by the caller without a model (Chroma clients).
	Model string
}

// CreateCollectionRequest creates a collection (Chroma's POST .../collections).
type CreateCollectionRequest struct {
	Tenant, Database, Name string
	Metadata               Metadata // nil: none; empty non-nil map is invalid (Chroma 400)
	HNSW                   *HNSWParams
	SPANN                  *SPANNParams
	EmbeddingFunction      json.RawMessage
	GetOrCreate            bool
	// Model and Dimension, when set, fix the embedding model and dimension up
	// front; otherwise the first write fixes them.
	Model     string
	Dimension int
}

// ModifyCollectionRequest changes a collection (Chroma's PUT .../collections/{id}).
type ModifyCollectionRequest struct {
	NewName     *string
	NewMetadata Metadata // nil: unchanged; replaces the whole map; Null values dropped
	// NewMetadataSet distinguishes "new_metadata": {} (invalid) from absent.
	NewMetadataSet       bool
	HNSW                 *HNSWParams
	SPANN                *SPANNParams
	EmbeddingFunction    json.RawMessage // nil: unchanged
	EmbeddingFunctionSet bool
}

// Tenant and Database as Chroma returns them.
type Tenant struct {
	Name string
}

type Database struct {
	ID     string
	Name   string
	Tenant string
}

// Include names a field of get and query results.
type Include string

const (
	IncludeDocuments  Include = "documents"
	IncludeEmbeddings Include = "embeddings"
	IncludeMetadatas  Include = "metadatas"
	IncludeDistances  Include = "distances"
	IncludeURIs       Include = "uris"
)

// AddRequest is the body of add and upsert. Every non-nil slice must have
// len(IDs) entries. Documents and URIs entries may be nil (no value). In add,
// a nil Metadatas entry or an empty map means no metadata and Null values are
// refused; in upsert, Null values delete keys of an existing record.
type AddRequest struct {
	IDs        []string
	Embeddings [][]float32 // required (Chroma 422 when missing)
	Documents  []*string
	URIs       []*string
	Metadatas  []Metadata
	// Model is the embedding model the vectors come from ("" = unknown; only
	// accepted by collections without a model).
	Model string
}

// UpdateRequest is the body of update: all fields but IDs optional, nil
// entries keep the old value, unknown ids are ignored.
type UpdateRequest struct {
	IDs        []string
	Embeddings [][]float32
	Documents  []*string
	URIs       []*string
	Metadatas  []Metadata
	Model      string
}

// GetRequest selects records. IDs nil means no ids filter; a non-nil empty
// slice selects nothing. Include nil means the default (documents, metadatas).
type GetRequest struct {
	IDs           []string
	Where         *where.Expr
	WhereDocument *where.DocExpr
	Limit         *int
	Offset        int
	Include       []Include
	// MaxScanBytes bounds the work of WhereDocument: the bytes of documents
	// its clauses may scan in all (0: DefaultMaxScanBytes).
	MaxScanBytes int64
	// MaxAnswerBytes, when positive, lets the store stop building the
	// result once it carries more than this many bytes (AnswerBudget): the
	// result is then cut short, and a caller that sets it must refuse a
	// result over it rather than serve it.
	MaxAnswerBytes int64
}

// GetResult is Chroma's GetResponse: fields not included are nil (JSON null);
// included ones are parallel to IDs. A nil Metadata entry is JSON null, an
// empty non-nil map is {} (a record with a uri but no metadata).
type GetResult struct {
	IDs        []string
	Embeddings [][]float32
	Documents  []*string
	URIs       []*string
	Metadatas  []Metadata
	Include    []Include
}

// QueryRequest runs a nearest-neighbour search for each of Embeddings.
// NResults nil means 10. Include nil means documents, metadatas, distances.
type QueryRequest struct {
	Embeddings    [][]float32
	NResults      *int
	IDs           []string
	Where         *where.Expr
	WhereDocument *where.DocExpr
	Include       []Include
	Model         string
	// MaxScanBytes bounds the work of WhereDocument: the bytes of documents
	// its clauses may scan in all (0: DefaultMaxScanBytes).
	MaxScanBytes int64
	// MaxAnswerBytes, when positive, lets the store stop building the
	// result once it carries more than this many bytes (AnswerBudget): the
	// result is then cut short, and a caller that sets it must refuse a
	// result over it rather than serve it.
	MaxAnswerBytes int64
}

// QueryResult is Chroma's QueryResponse: one inner list per query embedding,
// by ascending distance.
type QueryResult struct {
	IDs        [][]string
	Embeddings [][][]float32
	Documents  [][]*string
	URIs       [][]*string
	Metadatas  [][]Metadata
	Distances  [][]float32
	Include    []Include
}

// DeleteRequest deletes records matching IDs (nil = no ids filter) AND Where
// AND WhereDocument. All three absent deletes nothing.
type DeleteRequest struct {
	IDs           []string
	Where         *where.Expr
	WhereDocument *where.DocExpr
	// MaxScanBytes bounds the work of WhereDocument: the bytes of documents
	// its clauses may scan in all (0: DefaultMaxScanBytes).
	MaxScanBytes int64
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

// Metadata is a flat map of metadata values. In add, a nil Metadata means "no
// metadata". In upsert and update a Null value deletes the key.
type Metadata map[string]where.Value

// Clone returns a copy of m (nil stays nil).
func (m Metadata) Clone() Metadata {
	if m == nil {
		return nil
	}
	c := make(Metadata, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
