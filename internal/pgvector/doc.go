// Package pgvector writes and reads pgvector's text form of a vector
// ("[0.5,-1,3e-05]"), the one encoding both PostgreSQL stores
// (engine/postgres and pgcollections) send and read. Text writes each
// float32 in its shortest form that reads back as the same float32, so a
// vector stored and read again is bit-identical.
//
// It imports only the standard library, and nothing of the project.
//
// The official github.com/pgvector/pgvector-go is not used: it writes
// fixed notation (48 bytes for -1.1754942e-38, which Text writes in 14),
// its Parse panics on text shorter than two bytes and refuses "[]", and it
// would add eighteen modules besides itself (the ORMs it integrates with
// and theirs) to go.sum for two short functions.
package pgvector
