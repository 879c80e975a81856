// Package chromaapi serves Chroma's HTTP API v2, as the Chroma 1.0.0 server
// answers it, on top of cairn's collection store, so that existing Chroma
// clients (the chromadb JS and Python clients, curl scripts) work against
// `cairn serve` unchanged.
//
// New(Options) returns an http.Handler for the /api/v2 tree (and /api/v1,
// which answers 410 as in Chroma 1.0.0). The handler is safe for concurrent
// use; it holds no state besides its options and the store.
//
// The adapter is a JSON layer only: it decodes bodies in two passes (syntax,
// then shape, so that Chroma's 400-versus-422 split and its messages hold),
// keeps int and float metadata distinct through json.Number, accepts float
// and base64 embeddings, and writes responses by hand in Chroma's layout
// (float32 vectors and distances in shortest form, floats always with a point
// or exponent). Collection semantics (validation messages, where filters,
// ordering, merge rules) live in the store; errors of the store map to
// statuses and Chroma error bodies in one function, fromStore.
//
// Chroma compatibility is tested as data: testdata/chroma/cases/*.json holds
// request sequences recorded from the real Chroma 1.0.0 server (go test
// -record), replayed against this handler and, live, against the real server;
// divergences are declared per step with a reason.
//
// Imports: engine only (vecstore types come through engine's aliases); never
// vecstore, index or fts directly.
package chromaapi
