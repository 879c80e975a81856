// Package cairnapi is cairn's own HTTP API under /api/cairn/v1: store a
// message, write a note, search (everything the engine's search takes), get
// and delete a message, a message's neighbours in its channel, agent notes,
// channel messages, channels, agents, stats and messages over time, gc
// (retention, with a dry run), JSON in and out, documented by the OpenAPI 3.1 file it serves at
// /api/cairn/v1/openapi.json.
//
// Every error is a JSON body {"error": class, "message": text, "field":
// name}: 400 invalid_argument names the field and the rule, 404 not_found,
// 409 already_exists, embedder_mismatch or conflict (a gc whose plan
// changed since the dry run a person reviewed), 413 payload_too_large, 415
// unsupported_media_type (a body must be declared JSON), 503 unavailable
// (also when the server's body budget is spent), 507 disk_full (a fixed
// message: the cause names file paths); nothing is written when a request
// fails. statusOf is the one
// mapping of engine error classes to this surface.
//
// A Handler is safe for concurrent use. It imports engine, searchwire
// (the search's JSON shape, shared with MCP and the CLI) and httpguard
// (the request rules it shares with the Chroma API) only.
package cairnapi
