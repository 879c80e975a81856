// Package searchwire is the JSON shape of a search that cairn's HTTP API,
// its MCP tool search_messages and the CLI's search flags share
// (SearchSpec), and its one mapping onto the engine's request
// (SearchSpec.Request returns an engine.SearchRequest, checked as the
// engine checks a search): so every surface accepts and rejects the same
// searches and names the same JSON field in its errors. The shape's bounds
// (MaxLimit) live here; what an MCP agent reads about each field lives in
// mcpserver.
//
// Its types are plain values, safe for concurrent use once built. It
// imports engine only: not a store, not embed.
package searchwire
