// Package server is the HTTP front of `cairn serve`: one handler that routes
// /api/v2 and /api/v1 to the Chroma API, /api/cairn/v1 to cairn's own API,
// /metrics to the Prometheus exposition, and GET / and /console/ to the web
// console (package console: static files that hold no data, so served
// without the token); behind bearer-token auth (the
// Chroma API does its own, as Chroma does, with the same parser,
// httpguard), a structured request log and the request metrics.
//
// Before any API sees a request, the front checks (guard.go): the Host
// header names this server (an IP literal, localhost, or a configured
// name: DNS rebinding), the Origin header is the server's own or a
// configured one (configured origins get CORS headers and preflight
// answers), a POST/PUT/PATCH body is declared JSON, and the body fits the
// server-wide budget of body bytes buffered at once (503 beyond it).
// Refusals use the error body of the API the path belongs to.
//
// /metrics goes through the Prometheus client library
// (github.com/prometheus/client_golang) with a registry of the server's
// own: request counts and latency histograms by route, the vector store,
// the embedding queue and cache, and the Go runtime and process
// collectors. Metric labels are bounded: routes are named by their
// pattern, never by raw paths, and every path no route matches shares the
// label "unknown".
//
// A handler from New is safe for concurrent use. The package imports
// engine and its sibling adapters (cairnapi, httpguard, reqlog); the
// Chroma API comes in as an http.Handler (naming its routes through a
// Route method), and the vector store's counters are read through the
// engine's store, so it names no vecstore type.
package server
