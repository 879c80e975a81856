// Package enginetest is the test support the engine's packages share
// (engine, engine/ingest, engine/ops, engine/sqlite): an engine opened on
// a test's temporary data dir with a fake clock, checked (ops.Check) and
// closed when the test ends; the data dir's store of such an engine
// (StoreOf); a deterministic embedder (HashEmbedder) and the messages,
// Claude Code sessions, breadcrumb marks and backup archives their tests
// write and read.
//
// Tests only: no package's non-test code imports it (arch_test.go). It
// imports engine and its leaves (engine/claudecode/ccfixture,
// engine/redact), engine/ops and engine/sqlite, so only external test
// packages (engine_test, ingest_test, ops_test, sqlite_test) can use it.
// Its helpers are safe for concurrent use.
package enginetest
