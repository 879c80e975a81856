// Package where is the filter language of cairn's collections: Chroma's
// where (metadata) and where_document (document text) clauses as syntax
// trees, their JSON parser and canonical JSON form, and the typed metadata
// values they compare.
//
// One package holds the language so that its users agree on it: vecstore
// evaluates an *Expr and a *DocExpr over records, engine renders an *Expr to
// SQL over messages (parsing against a Schema, which checks the keys and
// gives each operand its key's type in the same walk), and the adapters
// parse what clients send. Parse errors are *Error values matching
// ErrInvalid, carrying the clause and the rule broken; the wording a
// client sees (Chroma's, or a cairn surface's) is chosen by the surface.
//
// Value semantics follow Chroma 1.0.0: int and float are distinct kinds
// (the JSON literal decides: 2 is an int, 2.0 a float); an $in/$nin list
// takes the kind of its first element, with ints widened to floats after a
// float; $contains is a case-sensitive substring test; $regex is an
// unanchored RE2 search (Go's regexp; Chroma uses Rust's regex crate, the
// same family: no backreferences, no look-around).
//
// Everything here is a value: trees are safe for concurrent reads once
// built (Validate compiles regular expressions; call it, or parse, before
// sharing a hand-built DocExpr). The package imports only the standard
// library and must not import any other cairn package.
package where
