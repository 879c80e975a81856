// Package chromaapi serves Chroma's HTTP API v2, as the Chroma 1.0.0 server
// answers it, on top of cairn's collection store, so that existing Chroma
// clients (the chromadb JS and Python clients, curl scripts) work against
// `cairn serve` unchanged.
//
// New(Options) returns an http.Handler for the /api/v2 tree (and /api/v1,
// which answers 410 as in Chroma 1.0.0). The handler is safe for concurrent
// use; it holds no state besides its options and the store.
//
// The adapter is a JSON layer only. It decodes bodies in two passes: a
// hand-written parser (jsonparse.go) checks syntax as Chroma's serde_json
// does, with the same messages and positions (400), and builds a tree whose
// numbers keep their literal (json.Number), so int and float metadata stay
// distinct; the tree is then matched against the request type, with serde's
// wording for shape errors (422). It accepts float and base64 embeddings and
// writes responses by hand in Chroma's layout (float32 vectors and distances
// in shortest form, floats always with a point or exponent, Ryu's layout).
// Collection semantics (validation, where filters, ordering, merge rules)
// live in the store, which refuses with error classes and rules; Chroma's
// wire text lives here: errors.go maps each class to a status and error
// name (and the few rules Chroma answers otherwise, 422 for a body of the
// wrong shape, to theirs) and words each rule as Chroma 1.0.0 does, in one
// place (fromStore).
//
// Limits (Options): body size (413), records per write and embeddings per
// query, n_results, records per answer (embeddings x n_results, or a get),
// ids per request, filter depth, clauses and $in values (400 naming the
// limit). A body must be declared JSON (415, as Chroma). A full disk
// answers 507 with a fixed message (the cause names file paths). Auth: a
// token in Authorization: Bearer or X-Chroma-Token (httpguard's parser,
// shared with cairn's API) when Options.AuthToken is set, checked before
// routing so an unauthenticated caller learns nothing about routes;
// ignored otherwise, as Chroma does. Stats reports per-route counters since New (the
// server's /metrics counts requests by route itself).
//
// cairn's one extension: a collection created with the metadata key
// "cairn:vector_code": "sq8" stores 8-bit codes instead of float32 (a
// quarter of the bytes; get returns embeddings within a quantization step
// of those written), "sq8r" 8-bit residuals from trained centroids
// (distances nearer float32's); see chroma.MetaVectorCode.
//
// Chroma compatibility is tested as data: testdata/chroma/cases/*.json holds
// request sequences recorded from the real Chroma 1.0.0 server (go test
// -record), replayed against this handler and, live, against the real server;
// divergences are declared per step with a reason. testdata/chroma_ops.jsonl
// and testdata/filters.txt are replayed on both servers by
// TestChromaDifferential; filters.txt is also this handler's golden file
// for the where languages (TestFiltersGolden, -rewrite).
//
// The store is a chroma.Store (Options.Collections), the model of package
// vecstore/chroma: vecstore's Store (cairn serve hands over the engine's
// one store) or pgcollections' Store (PostgreSQL), which package main
// opens and hands over; both refuse with chroma's error classes and rules.
//
// Read-only databases (Options.ReadOnly): cairn serve's engine keeps its
// message vectors in the same store, in database "cairn" of the default
// tenant, one collection per vector set. They stay readable (list, get,
// count, query: a Chroma client may search the messages' vectors with the
// same model), but any change is refused with 403 ChromaError "Database
// [cairn] is read-only: ..." (create, modify or delete a collection, add,
// upsert, update or delete records, create or delete the database); a
// reset (--allow-reset) deletes everything else and keeps them. They follow
// the messages in SQLite, and cairn check and cairn rebuild keep them in
// step. Options.ReadOnlyStore makes the whole store read-only (cairn
// serve on a data dir it may not write): every change is refused the same
// way, and get_or_create of a collection that exists still answers it.
//
// A deliberate divergence from Chroma: a NUL character (\u0000) in a
// record's id, document, uri, metadata key or string value is refused on
// add, upsert and update with 400 InvalidArgumentError naming the field
// (Chroma documents no such rule), as cairn refuses NUL in a message's
// content: tools that cut text at a NUL would read back or export other
// text than was written.
//
// Imports: vecstore/chroma (the model: the types, rules and errors of the
// collections it serves, and the Store it is handed), vecstore/where (the
// filter language), httpguard and reqlog; never a store (vecstore,
// pgcollections), engine, index or fts.
package chromaapi
