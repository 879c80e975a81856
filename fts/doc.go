// Package fts is cairn's keyword search: it turns any user text into a safe
// FTS5 query of plain terms, keeps an FTS5 table in step with its content
// table inside the caller's transaction, and runs BM25-ranked searches with
// marked snippets.
//
// # Plain terms
//
// Match never lets user text reach FTS5's query syntax. The text is split
// into terms at every character that is not a letter, digit, combining mark
// or private-use character (the same classes FTS5's unicode61 tokenizer keeps
// by default, so an emoji or punctuation is a separator); each term is
// written as an FTS5 string with its double quotes doubled, duplicates are
// dropped, and the terms are joined with OR so BM25 ranks documents by how
// many and how rare the terms they contain are. Quotes, parentheses, AND, OR,
// NOT, NEAR, '*', '^', ':' column filters and any script therefore mean
// themselves (or nothing, for separators) and never cause a syntax error.
// At most MaxTerms distinct terms are used (the first ones).
//
// # Tables
//
// A Table is an external-content FTS5 table (tokenize 'porter unicode61')
// over one TEXT column of a content table, keyed by its INTEGER rowid.
// Insert and Delete must run in the same transaction as the content change.
//
// # Concurrency
//
// Table values are immutable and safe for concurrent use; every method runs
// on the Querier (a *sql.DB, *sql.Conn or *sql.Tx) it is given.
//
// # Imports
//
// fts uses database/sql only: it must not import any cairn package, bbolt,
// hugot or a SQLite driver (the caller owns the driver).
package fts
