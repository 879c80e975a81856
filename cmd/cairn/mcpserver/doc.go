// Package mcpserver serves cairn's knowledge store to agents over the Model
// Context Protocol (stdio, the official Go SDK): storing messages and notes,
// searching them, reading them back, listing channels, stats and a guarded
// delete.
//
// Tools come in sets (Options.Tools). Every listed tool's definition is sent
// to the model in every session, so only the core set is served by default
// and its schemas are compact (descriptions for the main fields, names and
// types for the rest, open output schemas); the other sets are opt-in.
//
// The server answers the initialize handshake before the store is open: the
// engine (and the embedding model, which may take seconds to load) is opened
// in the background by Options.Open once the handshake is done, and each tool call
// waits for it. Results are compact by default (ids, scores, first lines,
// breadcrumbs) so a search never floods an agent's context; every reading
// tool takes "full" for whole contents.
//
// StdioTransport carries the protocol over stdin/stdout and never ends a
// session because of one bad line: it answers lines that are not JSON-RPC
// messages with JSON-RPC errors itself, bounds line size and nesting, and
// at the end of input answers every request already read before it
// reports the end.
//
// Engine errors map to MCP tool errors (isError results whose text names the
// field and the rule), never to protocol errors or crashes.
//
// A Server is safe for concurrent use. It imports engine and searchwire
// (the search's JSON shape, shared with the HTTP API and the CLI) only (no
// fts, vecstore or index).
package mcpserver
