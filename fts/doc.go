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
// # In-memory index
//
// FTS5's bm25() must score every row matching any query term before the
// LIMIT applies, which costs tens of milliseconds of CPU per query at
// 100,000 rows for common words under modernc.org/sqlite. An Index keeps an
// inverted index of the content table in memory (postings of term
// frequencies, document lengths) and computes the same BM25 with FTS5's
// formula and summation order, so scores are equal to the bit and the order
// (score, then rowid descending) is Table.Search's; an oracle test and a
// fuzz test hold this. Its tokenizer and Porter stemmer reproduce 'porter
// unicode61' (tested token by token against fts5vocab on the dev datasets;
// the per-character table fold_table.go is generated from FTS5 itself for
// the Basic Multilingual Plane). Queries it cannot mirror exactly (a term
// outside the BMP, or one FTS5 splits into a phrase) are declined and run
// on FTS5. Filters are the same SQL: candidates are checked in score order
// against the filter, or the rows the filter keeps are read when that is
// cheaper. SQLite stays the source of truth: every search catches up with
// rows added since (rowid above the last seen) and notices deletions by
// comparing document counts with FTS5's totals record; if counts or token
// totals ever disagree the index stops answering (Index.Err). Snippets are
// cut in Go (Table.Snippets) for the final hits only.
//
// # Concurrency
//
// Table values are immutable and safe for concurrent use; every method runs
// on the Querier it is given (a SQLite pool, connection or transaction,
// through fts/ftssql for database/sql's). Index is
// safe for concurrent use (an RWMutex; catching up is serialized).
//
// # Imports
//
// fts imports the standard library only, and no database package: it runs
// its statements on a Querier the caller hands it (package fts/ftssql
// adapts database/sql's), so that the rules (queries, tokens, stems,
// scores) reach the engine without storage code. It must not import any
// cairn package, bbolt, hugot or a SQLite driver (the caller owns the
// driver).
package fts
