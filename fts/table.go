package fts

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrInvalidName is returned by New for a table or column name that is not a
// plain SQL identifier.
var ErrInvalidName = errors.New("fts: invalid identifier")

// Querier is what fts runs statements on: a SQLite connection, pool or
// transaction (package fts/ftssql adapts database/sql's), so that fts
// itself needs no database package.
type Querier interface {
	// ExecContext runs a statement that returns no rows.
	ExecContext(ctx context.Context, query string, args ...any) error
	// QueryContext runs a query; the caller closes its rows.
	QueryContext(ctx context.Context, query string, args ...any) (Rows, error)
}

// Rows are a query's rows, read as database/sql's are: Next, then Scan
// (a *string destination is nil for NULL), Err after the last, Close.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Snapshotter is a Querier that can read in one snapshot (a pool, not a
// transaction already): an Index catches up inside one, so that what it
// reads is consistent.
type Snapshotter interface {
	Querier
	// Snapshot begins a read transaction; end ends it.
	Snapshot(ctx context.Context) (q Querier, end func(), err error)
}

// Table describes an external-content FTS5 table.
type Table struct {
	name, content, column, rowid string
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// New describes the FTS5 table name indexing column of table content, whose
// rows are keyed by the INTEGER column rowid.
func New(name, content, column, rowid string) (*Table, error) {
	for _, s := range []string{name, content, column, rowid} {
		if !identRE.MatchString(s) {
			return nil, fmt.Errorf("%w: %q", ErrInvalidName, s)
		}
	}
	return &Table{name: name, content: content, column: column, rowid: rowid}, nil
}

// Name returns the FTS5 table's name.
func (t *Table) Name() string { return t.name }

// CreateSQL returns the CREATE VIRTUAL TABLE statement for the table. It is
// meant to be frozen into a migration.
func (t *Table) CreateSQL() string {
	return fmt.Sprintf("CREATE VIRTUAL TABLE %s USING fts5(%s, content='%s', content_rowid='%s', tokenize='porter unicode61')",
		t.name, t.column, t.content, t.rowid)
}

// Insert indexes text under rowid. Run it in the transaction that inserts
// the content row.
func (t *Table) Insert(ctx context.Context, q Querier, rowid int64, text string) error {
	err := q.ExecContext(ctx, "INSERT INTO "+t.name+"(rowid, "+t.column+") VALUES (?, ?)", rowid, text)
	if err != nil {
		return fmt.Errorf("fts: insert %d: %w", rowid, err)
	}
	return nil
}

// Delete removes rowid, whose indexed text was text (an external-content
// table needs the old text to remove its tokens). Run it in the transaction
// that deletes the content row, before the row is gone.
func (t *Table) Delete(ctx context.Context, q Querier, rowid int64, text string) error {
	err := q.ExecContext(ctx, "INSERT INTO "+t.name+"("+t.name+", rowid, "+t.column+") VALUES ('delete', ?, ?)", rowid, text)
	if err != nil {
		return fmt.Errorf("fts: delete %d: %w", rowid, err)
	}
	return nil
}

// SecureDelete turns on FTS5's secure-delete option (stored with the
// table, SQLite 3.44+): a later Delete removes the row's entries from the
// index b-tree instead of adding delete markers beside them, so the terms
// of a deleted text leave the index at once instead of at the next merge.
// It is a no-op when the option is already on.
func (t *Table) SecureDelete(ctx context.Context, q Querier) error {
	rows, err := q.QueryContext(ctx, "SELECT 1 FROM "+t.name+"_config WHERE k = 'secure-delete' AND v = 1")
	if err != nil {
		return fmt.Errorf("fts: secure-delete: %w", err)
	}
	on := rows.Next()
	rows.Close()
	if on {
		return nil
	}
	if err := q.ExecContext(ctx, "INSERT INTO "+t.name+"("+t.name+", rank) VALUES ('secure-delete', 1)"); err != nil {
		return fmt.Errorf("fts: secure-delete: %w", err)
	}
	return nil
}

// Refresh runs a query on the index through q, so that the connection
// reloads the index structure if another connection changed it. FTS5's
// integrity check (also run by PRAGMA quick_check) reads the structure the
// connection last cached without that check.
func (t *Table) Refresh(ctx context.Context, q Querier) error {
	rows, err := q.QueryContext(ctx, "SELECT rowid FROM "+t.name+" WHERE "+t.name+" MATCH '\"cairnrefresh\"' LIMIT 1")
	if err != nil {
		return fmt.Errorf("fts: refresh: %w", err)
	}
	for rows.Next() {
	}
	rows.Close()
	return rows.Err()
}

// Rebuild regenerates the whole index from the content table.
func (t *Table) Rebuild(ctx context.Context, q Querier) error {
	err := q.ExecContext(ctx, "INSERT INTO "+t.name+"("+t.name+") VALUES ('rebuild')")
	if err != nil {
		return fmt.Errorf("fts: rebuild: %w", err)
	}
	return nil
}

// Optimize merges the index's b-trees into one (slow; for maintenance).
func (t *Table) Optimize(ctx context.Context, q Querier) error {
	err := q.ExecContext(ctx, "INSERT INTO "+t.name+"("+t.name+") VALUES ('optimize')")
	if err != nil {
		return fmt.Errorf("fts: optimize: %w", err)
	}
	return nil
}

// Check verifies that the index matches the content table exactly (FTS5's
// integrity-check with rank 1). It returns a non-nil error describing the
// first problem found.
func (t *Table) Check(ctx context.Context, q Querier) error {
	err := q.ExecContext(ctx, "INSERT INTO "+t.name+"("+t.name+", rank) VALUES ('integrity-check', 1)")
	if err != nil {
		return fmt.Errorf("fts: integrity check: %w", err)
	}
	return nil
}

// Request is one keyword search.
type Request struct {
	// Query is the user's text as plain terms (ParseQuery; see Match).
	Query Query
	// Filter is an optional SQL boolean expression over the content table,
	// which the query names c (for example "c.channel_id IN (?, ?)"), with
	// its arguments in Args. It is applied before ranking and limiting.
	Filter string
	Args   []any
	// Limit is the number of hits to return; <= 0 means 20.
	Limit int
	// Snippet marks: text placed before and after each matched term, and
	// between snippet fragments. Zero values mean "**", "**" and "…".
	MarkStart, MarkEnd, Ellipsis string
	// SnippetTokens is the snippet's length in tokens (1..64); 0 means 24.
	SnippetTokens int
	// CacheFilter lets an Index keep the set of rows Filter keeps (and
	// extend it with new rows) for later searches with the same Filter and
	// Args: only for filters that depend on nothing but the row itself and
	// other rows that never change.
	CacheFilter bool
	// NoSnippets skips the snippets (Hit.Snippet stays ""): a caller that
	// keeps only some hits asks Snippets for those.
	NoSnippets bool
}

// Hit is one search result.
type Hit struct {
	RowID int64
	// Score is the BM25 score, larger is better (FTS5's bm25() negated).
	Score float64
	// Snippet is the best fragment of the text with matched terms marked.
	Snippet string
}

// Search returns the best hits for req ordered by BM25 score (best first,
// ties by rowid descending). Text with no terms returns no hits.
func (t *Table) Search(ctx context.Context, q Querier, req Request) ([]Hit, error) {
	match := req.Query.match()
	if match == "" {
		return nil, nil
	}
	limit := req.Limit
	if limit <= 0 {
		limit = 20
	}

	// Rank first, then make snippets for the winners only: snippet() reads
	// the content row and re-tokenizes it, which would otherwise be paid for
	// every matching row.
	var b strings.Builder
	fmt.Fprintf(&b, "SELECT f.rowid, bm25(%s) AS score FROM %s f", t.name, t.name)
	if req.Filter != "" {
		fmt.Fprintf(&b, " JOIN %s c ON c.%s = f.rowid", t.content, t.rowid)
	}
	fmt.Fprintf(&b, " WHERE %s MATCH ?", t.name)
	args := make([]any, 0, len(req.Args)+2)
	args = append(args, match)
	if req.Filter != "" {
		b.WriteString(" AND (" + req.Filter + ")")
		args = append(args, req.Args...)
	}
	b.WriteString(" ORDER BY score, f.rowid DESC LIMIT ?")
	args = append(args, limit)

	rows, err := q.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("fts: search: %w", err)
	}
	var hits []Hit
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.RowID, &h.Score); err != nil {
			rows.Close()
			return nil, fmt.Errorf("fts: search: %w", err)
		}
		h.Score = -h.Score
		hits = append(hits, h)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("fts: search: %w", err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("fts: search: %w", err)
	}
	if len(hits) == 0 {
		return nil, nil
	}
	if req.NoSnippets {
		return hits, nil
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.RowID
	}
	snippets, err := t.Snippets(ctx, q, req, ids)
	if err != nil {
		return nil, err
	}
	for i := range hits {
		hits[i].Snippet = snippets[hits[i].RowID]
	}
	return hits, nil
}
