// Package server is the HTTP front of `cairn serve`: one handler that routes
// /api/v2 and /api/v1 to the Chroma API, /api/cairn/v1 to cairn's own API
// and /metrics to the Prometheus text exposition of request counts, latency
// histograms, vector index sizes, the embedding queue and the embedding
// cache; behind bearer-token auth (the Chroma API does its own, as Chroma
// does), a structured request log and the request metrics.
//
// Metric labels are bounded: routes are named by their pattern, never by
// raw paths, which carry ids.
//
// A handler from New is safe for concurrent use. The package imports
// engine and its sibling adapters (cairnapi, reqlog); the Chroma API comes
// in as an http.Handler, and the vector store's counters are read through
// the engine's store, so it names no vecstore type.
package server
