// Package chroma is cairn's model of Chroma 1.0.0's collections: the
// types of tenants, databases, collections and records, the requests and
// results of every operation, the rules a request must keep (names, ids,
// metadata, embeddings, configuration, include lists, filters), and the
// error classes and rules every refusal carries. It is what a store of
// collections implements (Store) and what an adapter over one speaks.
//
// Two stores implement Store: package vecstore (one bbolt file with an
// HNSW graph per collection) and package pgcollections (PostgreSQL with
// pgvector). Both apply the rules of this package in the same order, so a
// request refused by one is refused by the other with the same *Error.
// The Chroma HTTP adapter (cmd/cairn/chromaapi) sees only this package
// and the filter language (package where); it maps each error class to an
// HTTP status and words each rule as Chroma does. No wire text lives here.
//
// Errors. Every refusal is a *Error: Class is one of the Err* sentinels
// (errors.Is), Rule names the rule broken, Field, Key, Value, Want, Min,
// Max and Op say what was refused, Reason says it in cairn's words. The
// texts (Error(), the sentinels) keep the "vecstore:" prefix they have
// always had: they are what a client reads for the rules an adapter does
// not word itself.
//
// Requests and results mirror Chroma's bodies: nil slices and maps are
// JSON null (GetResult and QueryResult keep Chroma's null-versus-empty
// distinctions), Metadata values are where.Value (int and float distinct).
// HNSWConfig and CollectionConfig carry JSON tags because the stores keep
// them as JSON (vecstore inside its collections bucket, pgcollections in
// a jsonb column): those names are part of both stores' formats.
//
// Everything here is a value or a pure function, safe for concurrent use,
// except DocMatcher and AnswerBudget (one per request). AnswerBudget is
// how both stores stop copying a get or query result once it is over
// MaxAnswerBytes, counting the same bytes. The package imports the
// standard library and vecstore/where only; never bbolt, database/sql,
// index or any store.
package chroma
