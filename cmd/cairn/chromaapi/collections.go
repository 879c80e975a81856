package chromaapi

import (
	"context"

	"github.com/cairn-dev/cairn/vecstore"
)

// Collections is the collection store the API serves: tenants, databases,
// collections and their records with Chroma 1.0.0's semantics, refusing with
// *vecstore.Error classes and rules (mapped once, in errors.go).
// *vecstore.Store (one data directory) and *pgcollections.Store
// (PostgreSQL) implement it.
type Collections interface {
	CreateTenant(ctx context.Context, name string) error
	GetTenant(ctx context.Context, name string) (vecstore.Tenant, error)
	CreateDatabase(ctx context.Context, tenant, name string) error
	GetDatabase(ctx context.Context, tenant, name string) (vecstore.Database, error)
	ListDatabases(ctx context.Context, tenant string, limit *int, offset int) ([]vecstore.Database, error)
	DeleteDatabase(ctx context.Context, tenant, name string) error

	CreateCollection(ctx context.Context, req vecstore.CreateCollectionRequest) (vecstore.Collection, error)
	GetCollection(ctx context.Context, tenant, database, name string) (vecstore.Collection, error)
	GetCollectionByID(ctx context.Context, id string) (vecstore.Collection, error)
	ListCollections(ctx context.Context, tenant, database string, limit *int, offset int) ([]vecstore.Collection, error)
	CountCollections(ctx context.Context, tenant, database string) (int, error)
	ModifyCollection(ctx context.Context, id string, req vecstore.ModifyCollectionRequest) error
	DeleteCollection(ctx context.Context, tenant, database, name string) error
	Reset(ctx context.Context) error

	Add(ctx context.Context, collID string, req vecstore.AddRequest) error
	Upsert(ctx context.Context, collID string, req vecstore.AddRequest) error
	Update(ctx context.Context, collID string, req vecstore.UpdateRequest) error
	Delete(ctx context.Context, collID string, req vecstore.DeleteRequest) error
	Count(ctx context.Context, collID string) (int, error)
	Get(ctx context.Context, collID string, req vecstore.GetRequest) (*vecstore.GetResult, error)
	Query(ctx context.Context, collID string, req vecstore.QueryRequest) (*vecstore.QueryResult, error)
}

var _ Collections = (*vecstore.Store)(nil)
