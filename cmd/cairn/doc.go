// Command cairn is the command line of cairn, a semantic knowledge engine
// for AI agents: it stores notes and messages in a local data dir and finds
// them again.
//
// Every subcommand lives in its own file and is listed in commands.go; each
// runs in-process against the engine package (nothing shells out). main.go
// only wires signals and exit codes: 0 success, 1 failure, 2 bad input or
// usage, 130 interrupted.
//
// Package main is wiring: flags, output and exit codes. The work is done by
// engine and by the adapter packages below cmd/cairn: config (config.toml
// to engine options), cairnapi, chromaapi and mcpserver (the APIs), server
// (the HTTP front of `cairn serve`: routing, auth, request log, /metrics),
// reqlog (the response recorder they share) and agentsetup (the agents'
// configuration files `cairn setup` edits).
//
// cmd/cairn imports engine (and embed only for main wiring); it must not
// import fts, vecstore or index directly.
package main
