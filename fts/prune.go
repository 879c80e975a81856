package fts

import (
	"context"
	"fmt"
	"strings"
)

// Frequent-term pruning. FTS5's bm25() scores every row matching any term
// before the LIMIT applies, so a term found in most rows makes a query
// cost as much as scoring the whole table. Above half of the documents a
// term's idf, log((N-n+0.5)/(n+0.5)), is at most 0 and FTS5 floors it to
// 1e-6: the term adds next to nothing to any score, and dropping it changes
// the hits only by the documents that hold nothing else. Every keyword path
// drops the same terms (Table.PruneFrequent on FTS5's counts,
// Index.SearchPruned on its own, a store's own through DropFrequent), so
// that a query ranks the same whichever answers it.
const (
	// FrequentShare: a term found in more than this share of the documents
	// is dropped from the query (when the query has another term).
	FrequentShare = 1.0 / 2
	// PruneMinDocs: below this many documents every query is cheap and
	// nothing is pruned.
	PruneMinDocs = 1000
)

// DocCount returns the number of documents in the table, read from FTS5's
// own totals record (one row, no scan).
func (t *Table) DocCount(ctx context.Context, q Querier) (int64, error) {
	rows, err := q.QueryContext(ctx, fmt.Sprintf("SELECT block FROM %s_data WHERE id = 1", t.name))
	if err != nil {
		return 0, fmt.Errorf("fts: document count: %w", err)
	}
	var block []byte
	if rows.Next() {
		err = rows.Scan(&block)
	}
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("fts: document count: %w", err)
	}
	n, _ := uvarint(block)
	return int64(n), nil
}

// VocabSQL returns the CREATE VIRTUAL TABLE statement of the fts5vocab
// 'row' table PruneFrequent reads (named after the table, suffix _vocab).
func (t *Table) VocabSQL() string {
	return fmt.Sprintf("CREATE VIRTUAL TABLE %s_vocab USING fts5vocab(%s, 'row')", t.name, t.name)
}

// PruneFrequent returns query without the terms found in more than
// FrequentShare of the documents, keeping the rarest term when every term
// is frequent; a query of one term, or a table of fewer than 1,000
// documents, is returned as is. Document frequencies come from the
// table's fts5vocab view (VocabSQL). A term the vocabulary does not list
// under its plain form (stemmed differently) is kept: pruning only ever
// saves time. Index.SearchPruned applies the same rule to its own counts.
func (t *Table) PruneFrequent(ctx context.Context, q Querier, query Query) (Query, error) {
	if len(query.terms) < 2 {
		return query, nil
	}
	n, err := t.DocCount(ctx, q)
	if err != nil || n < PruneMinDocs {
		return query, err
	}
	df, err := t.docFreqs(ctx, q, query.terms)
	if err != nil {
		return query, err
	}
	return DropFrequent(query, n, func(term string) int64 { return df[term] }), nil
}

// DropFrequent is PruneFrequent's rule for n documents, of which df(term)
// hold the index term term (0: none, or not an index term): for a store
// that keeps its own counts, so that it ranks as the embedded store does.
func DropFrequent(query Query, n int64, df func(term string) int64) Query {
	if len(query.terms) < 2 || n < PruneMinDocs {
		return query
	}
	limit := int64(float64(n) * FrequentShare)
	rarest := 0
	for i, term := range query.terms {
		if df(term) < df(query.terms[rarest]) {
			rarest = i
		}
	}
	kept := query.keep(func(i int) bool { return df(query.terms[i]) <= limit })
	if kept.Empty() {
		kept = query.keep(func(i int) bool { return i == rarest })
	}
	return kept
}

// docFreqs returns the number of documents holding each of terms (absent:
// not in the vocabulary).
func (t *Table) docFreqs(ctx context.Context, q Querier, terms []string) (map[string]int64, error) {
	args := make([]any, len(terms))
	for i, term := range terms {
		args[i] = term
	}
	marks := strings.TrimSuffix(strings.Repeat("?,", len(terms)), ",")
	rows, err := q.QueryContext(ctx, fmt.Sprintf("SELECT term, doc FROM %s_vocab WHERE term IN (%s)", t.name, marks), args...)
	if err != nil {
		return nil, fmt.Errorf("fts: document frequencies: %w", err)
	}
	defer rows.Close()
	df := map[string]int64{}
	for rows.Next() {
		var term string
		var d int64
		if err := rows.Scan(&term, &d); err != nil {
			return nil, fmt.Errorf("fts: document frequencies: %w", err)
		}
		df[term] = d
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("fts: document frequencies: %w", err)
	}
	return df, nil
}
