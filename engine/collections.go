package engine

import (
	"context"

	"github.com/cairn-dev/cairn/vecstore"
)

// This file re-exports the vecstore types that adapters (the Chroma HTTP API
// in cmd/cairn/chromaapi) need, so that they import engine only (see the
// import table in engine/doc.go). The aliases are the vecstore types
// themselves: no conversion, no copy.

type (
	// Collections is the Chroma-compatible collection store (vecstore.Store).
	Collections = vecstore.Store
	// CollectionsOptions configures OpenCollections.
	CollectionsOptions = vecstore.Options

	Collection              = vecstore.Collection
	CollectionConfig        = vecstore.CollectionConfig
	HNSWConfig              = vecstore.HNSWConfig
	HNSWParams              = vecstore.HNSWParams
	SPANNParams             = vecstore.SPANNParams
	Space                   = vecstore.Space
	CreateCollectionRequest = vecstore.CreateCollectionRequest
	ModifyCollectionRequest = vecstore.ModifyCollectionRequest
	CollectionTenant        = vecstore.Tenant
	CollectionDatabase      = vecstore.Database
	Include                 = vecstore.Include
	AddRequest              = vecstore.AddRequest
	UpdateRequest           = vecstore.UpdateRequest
	GetRequest              = vecstore.GetRequest
	GetResult               = vecstore.GetResult
	QueryRequest            = vecstore.QueryRequest
	QueryResult             = vecstore.QueryResult
	DeleteRequest           = vecstore.DeleteRequest
	CollectionsStats        = vecstore.Stats
	MetaKind                = vecstore.Kind
	MetaValue               = vecstore.Value
	Metadata                = vecstore.Metadata
	Where                   = vecstore.Where
	WhereDocument           = vecstore.WhereDocument
	CollectionError         = vecstore.Error
)

// Metadata value kinds.
const (
	MetaNull   = vecstore.KindNull
	MetaString = vecstore.KindString
	MetaInt    = vecstore.KindInt
	MetaFloat  = vecstore.KindFloat
	MetaBool   = vecstore.KindBool
)

// Defaults of the collection store.
const (
	DefaultTenant       = vecstore.DefaultTenant
	DefaultDatabase     = vecstore.DefaultDatabase
	CollectionsMaxBatch = vecstore.MaxBatchSize
	IncludeDocuments    = vecstore.IncludeDocuments
	IncludeEmbeddings   = vecstore.IncludeEmbeddings
	IncludeMetadatas    = vecstore.IncludeMetadatas
	IncludeDistances    = vecstore.IncludeDistances
	IncludeURIs         = vecstore.IncludeURIs
)

// Error classes of collection operations (each *CollectionError matches
// exactly one with errors.Is).
var (
	ErrCollInvalid           = vecstore.ErrInvalid
	ErrCollUnprocessable     = vecstore.ErrUnprocessable
	ErrCollNotFound          = vecstore.ErrNotFound
	ErrCollExists            = vecstore.ErrExists
	ErrCollInternal          = vecstore.ErrInternal
	ErrCollDimensionMismatch = vecstore.ErrDimensionMismatch
	ErrCollEmbedderMismatch  = vecstore.ErrEmbedderMismatch
	ErrCollClosed            = vecstore.ErrClosed
	ErrCollCorrupt           = vecstore.ErrCorrupt
	ErrCollIncompatible      = vecstore.ErrIncompatibleFormat
	ErrCollUnimplemented     = vecstore.ErrUnimplemented
	ErrCollForbidden         = vecstore.ErrForbidden
)

// OpenCollections opens (creating if needed) the collection store in dir.
func OpenCollections(ctx context.Context, dir string, opts CollectionsOptions) (*Collections, error) {
	return vecstore.Open(ctx, dir, opts)
}

// WhereFromJSON parses a Chroma where clause decoded with json.Decoder.UseNumber.
func WhereFromJSON(x any) (*Where, error) { return vecstore.WhereFromJSON(x) }

// WhereDocumentFromJSON parses a Chroma where_document clause decoded with UseNumber.
func WhereDocumentFromJSON(x any) (*WhereDocument, error) { return vecstore.WhereDocumentFromJSON(x) }

// ParseCollectionID validates a collection UUID as Chroma does.
func ParseCollectionID(id string) (string, error) { return vecstore.ParseCollectionID(id) }

// CollectionErrorMessage returns the Chroma message of a collection error.
func CollectionErrorMessage(err error) string { return vecstore.ErrorMessage(err) }
