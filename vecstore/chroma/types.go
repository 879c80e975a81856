package chroma

import (
	"encoding/json"

	"github.com/cairn-dev/cairn/vecstore/where"
)

// Default tenant and database: every store has them from its first open.
const (
	DefaultTenant   = "default_tenant"
	DefaultDatabase = "default_database"
)

// Space is a collection's distance function, with Chroma's names and formulas:
// "l2" squared Euclidean, "ip" 1 − dot, "cosine" 1 − cosine similarity.
type Space string

const (
	SpaceL2     Space = "l2"
	SpaceIP     Space = "ip"
	SpaceCosine Space = "cosine"
)

// HNSWConfig is a collection's HNSW configuration (what Chroma echoes in
// configuration_json.hnsw). Its JSON form is part of the stores' formats:
// vecstore's collections bucket and pgcollections' config column hold it.
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
	Metadata               Metadata // nil: none; an empty non-nil map is invalid
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
	Embeddings [][]float32 // required (RuleMissing when nil)
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

// VectorCode is how a collection stores its vectors, on disk and in its
// graph. It is chosen when the collection is created and kept in its
// configuration.
type VectorCode string

const (
	// CodeFloat32 (the default; stored as "") keeps every vector exactly as
	// written: Get with embeddings returns the same floats.
	CodeFloat32 VectorCode = "float32"
	// CodeSQ8 keeps every vector as 8-bit codes with a per-vector offset and
	// step (index.SQ8): about a quarter of the bytes on disk and in memory.
	// Get returns the decoded vector (each component within one step,
	// 1/255 of the vector's range, of the one written), and distances are
	// to the decoded vectors.
	CodeSQ8 VectorCode = "sq8"
	// CodeSQ8R keeps every vector as an 8-bit code of its residual from
	// the nearest of a table of centroids (index.SQ8Residual), trained
	// when the collection first holds index.TrainRows vectors and stored
	// with it in 8 bits; vectors written before that are plain SQ8 codes.
	// Six bytes a vector more than SQ8, nearer distances. Get returns the
	// decoded vector.
	CodeSQ8R VectorCode = "sq8r"
)

// MetaVectorCode is the collection metadata key that selects the vector code
// at creation ("float32", "sq8" or "sq8r"): cairn's extension to Chroma's
// configuration, read like Chroma's legacy "hnsw:*" keys (once, when the
// collection is created; changing the key later changes nothing). It is
// read whether or not the request carries a configuration.
const MetaVectorCode = "cairn:vector_code"

// MaxIDBytes bounds a record id: it is a key of the embedded store, whose
// keys are at most 32 KiB with the collection's prefix; 4 KiB leaves room
// and is more than any id scheme needs.
const MaxIDBytes = 4096

// DefaultNResults is a query's n_results when the request sets none
// (Chroma's default).
const DefaultNResults = 10

// DefaultMaxScanBytes bounds the work of one request's where_document
// filter when the request sets no MaxScanBytes: 256 MiB of document bytes
// scanned, each clause evaluated counting its document's length. A
// two-clause filter over 100,000 documents of 1 KB fits, and costs well
// under a second with $contains; Go's regular expressions scan a few MB
// to a few hundred MB a second, so the slowest filter within the bound
// still ends within about a minute of CPU (write_timeout is 5 minutes).
const DefaultMaxScanBytes = 256 << 20
