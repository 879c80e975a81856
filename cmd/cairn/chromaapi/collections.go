package chromaapi

import (
	"context"

	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// Collections is the collection store the API serves: tenants, databases,
// collections and their records with Chroma 1.0.0's semantics, refusing with
// *chroma.Error classes and rules (mapped once, in errors.go).
// *vecstore.Store (one data directory) and *pgcollections.Store
// (PostgreSQL) implement it.
type Collections interface {
	CreateTenant(ctx context.Context, name string) error
	GetTenant(ctx context.Context, name string) (chroma.Tenant, error)
	CreateDatabase(ctx context.Context, tenant, name string) error
	GetDatabase(ctx context.Context, tenant, name string) (chroma.Database, error)
	ListDatabases(ctx context.Context, tenant string, limit *int, offset int) ([]chroma.Database, error)
	DeleteDatabase(ctx context.Context, tenant, name string) error

	CreateCollection(ctx context.Context, req chroma.CreateCollectionRequest) (chroma.Collection, error)
	GetCollection(ctx context.Context, tenant, database, name string) (chroma.Collection, error)
	GetCollectionByID(ctx context.Context, id string) (chroma.Collection, error)
	ListCollections(ctx context.Context, tenant, database string, limit *int, offset int) ([]chroma.Collection, error)
	CountCollections(ctx context.Context, tenant, database string) (int, error)
	ModifyCollection(ctx context.Context, id string, req chroma.ModifyCollectionRequest) error
	DeleteCollection(ctx context.Context, tenant, database, name string) error
	Reset(ctx context.Context) error

	Add(ctx context.Context, collID string, req chroma.AddRequest) error
	Upsert(ctx context.Context, collID string, req chroma.AddRequest) error
	Update(ctx context.Context, collID string, req chroma.UpdateRequest) error
	Delete(ctx context.Context, collID string, req chroma.DeleteRequest) error
	Count(ctx context.Context, collID string) (int, error)
	Get(ctx context.Context, collID string, req chroma.GetRequest) (*chroma.GetResult, error)
	Query(ctx context.Context, collID string, req chroma.QueryRequest) (*chroma.QueryResult, error)
}

var _ Collections = (*vecstore.Store)(nil)
