package chroma

import "context"

// Store is a store of collections with Chroma 1.0.0's semantics: tenants,
// databases, collections and their records, refusing with *Error classes
// and rules. *vecstore.Store (one data directory) and *pgcollections.Store
// (PostgreSQL) implement it; the Chroma HTTP adapter serves one.
type Store interface {
	CreateTenant(ctx context.Context, name string) error
	GetTenant(ctx context.Context, name string) (Tenant, error)
	CreateDatabase(ctx context.Context, tenant, name string) error
	GetDatabase(ctx context.Context, tenant, name string) (Database, error)
	ListDatabases(ctx context.Context, tenant string, limit *int, offset int) ([]Database, error)
	DeleteDatabase(ctx context.Context, tenant, name string) error

	CreateCollection(ctx context.Context, req CreateCollectionRequest) (Collection, error)
	GetCollection(ctx context.Context, tenant, database, name string) (Collection, error)
	GetCollectionByID(ctx context.Context, id string) (Collection, error)
	ListCollections(ctx context.Context, tenant, database string, limit *int, offset int) ([]Collection, error)
	CountCollections(ctx context.Context, tenant, database string) (int, error)
	ModifyCollection(ctx context.Context, id string, req ModifyCollectionRequest) error
	DeleteCollection(ctx context.Context, tenant, database, name string) error
	Reset(ctx context.Context) error

	Add(ctx context.Context, collID string, req AddRequest) error
	Upsert(ctx context.Context, collID string, req AddRequest) error
	Update(ctx context.Context, collID string, req UpdateRequest) error
	Delete(ctx context.Context, collID string, req DeleteRequest) error
	Count(ctx context.Context, collID string) (int, error)
	Get(ctx context.Context, collID string, req GetRequest) (*GetResult, error)
	Query(ctx context.Context, collID string, req QueryRequest) (*QueryResult, error)
}
