// Package pgcollections stores cairn's Chroma collections in PostgreSQL
// with pgvector: the same tenants, databases, collections and records as
// package vecstore, with the same semantics and the same refusals (both
// implement vecstore/chroma's Store and apply its rules, so a request
// refused by one store is refused by the other with the same
// *chroma.Error), for teams whose
// agents run on several machines and share one PostgreSQL.
//
// Open(ctx, dsn, Options) connects (a pool), applies the versioned
// migrations below under an advisory lock (a database migrated by a newer
// cairn is refused with chroma.ErrIncompatibleFormat), makes sure the
// default tenant and database exist and reads pgvector's version. A Store
// is safe for concurrent use, and any number of processes may share one
// database: each write is one transaction that locks its collection's row
// (SELECT ... FOR UPDATE), so writes to one collection are serialized
// across processes, inserts use ON CONFLICT, and a transaction that
// PostgreSQL aborts for a deadlock or a serialization failure is retried.
//
// # Tables (schema version 1, table cairn_chroma_schema)
//
//	chroma_tenants     name
//	chroma_databases   tenant, name, id (uuid)
//	chroma_collections id (uuid), tenant, database, name, metadata (jsonb),
//	                   float_keys (jsonb), config (jsonb: chroma's
//	                   CollectionConfig), dimension, model
//	chroma_records     collection, id, seq (insertion order), embedding
//	                   (vector, float32 as written), document, uri,
//	                   metadata (jsonb), float_keys (jsonb)
//
// Metadata is stored as plain JSON values so that filters run in SQL; as
// JSON numbers lose the int/float distinction Chroma keeps, float_keys lists
// the keys whose values are floats. Non-finite floats and NUL characters
// cannot be stored in jsonb and are refused (ErrInvalid).
//
// # Queries
//
// Once a collection's dimension is fixed (its first vectors), a partial
// HNSW index on embedding::vector(dim) for that collection's rows is built
// with the collection's space (vector_l2_ops, vector_ip_ops,
// vector_cosine_ops) and its max_neighbors and ef_construction; distances
// are converted to Chroma's (squared l2, 1 - dot, 1 - cosine). Queries run
// with hnsw.ef_search at twice the collection's ef_search (as vecstore's
// beam) and, with pgvector 0.8.0 or later, hnsw.iterative_scan =
// strict_order, so a selective filter still fills n_results. A collection
// (or a filtered set) of at most ExactMax records is scanned exactly, as
// vecstore does, so small collections answer the same ids in the same
// order. where filters are translated to SQL over the jsonb metadata;
// where_document $contains/$not_contains run in SQL, and a document filter
// with a regular expression is evaluated in Go (RE2, as vecstore) over the
// records the other filters allow.
//
// Imports: vecstore/chroma and vecstore/where (the model: types, rules,
// errors, filters), internal/pgvector (the vector text form it shares
// with engine/postgres) and pgx; never vecstore (bbolt), engine, fts, embed or
// index.
package pgcollections
