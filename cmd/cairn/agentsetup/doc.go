// Package agentsetup wires cairn into coding agents' own configuration
// files: Claude Code, Codex and Gemini CLI. For each agent it registers the
// MCP server (`cairn mcp` with the absolute path of the binary and the data
// dir), installs the agent's lifecycle hooks where the agent has them
// (`cairn hook AGENT`), and adds a short memory instruction to the agent's
// user-level instructions file between markers it can find again.
//
// Plan computes every change as a Change (path, bytes before, bytes after)
// without writing; Apply writes them (temp file in the same directory,
// fsync, rename, fsync the directory) and keeps in State how to reverse each
// one exactly. Uninstall planning first restores a file's bytes from State
// when the file still holds exactly what setup wrote, and otherwise removes
// cairn's entries structurally (JSON keys, one TOML table, the marked
// block), leaving everything else in place.
//
// Edits keep what is not cairn's: JSON files keep every other key in its
// order (they are written back with two-space indentation, the form the
// agents write themselves), TOML files are edited as text inside cairn's own
// table only, Markdown files outside the markers are left byte for byte.
//
// Nothing here holds state between calls; functions are safe for concurrent
// use on different homes. It imports nothing from the project: it writes
// agents' files and knows nothing of the store.
package agentsetup
