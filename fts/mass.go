package fts

import (
	"context"
	"math"
)

// IDF is the inverse document frequency BM25 gives a term held by df of n
// documents, FTS5's log((n-df+0.5)/(df+0.5)) floored at 1e-6 (a term in
// more than half of the documents adds next to nothing). Every keyword
// path (FTS5, Index, a store's own scoring) uses it.
func IDF(n, df int64) float64 {
	v := math.Log((float64(n) - float64(df) + 0.5) / (float64(df) + 0.5))
	if v <= 0 {
		return 1e-6
	}
	return v
}

// QueryMass is the BM25 score that a document of average length holding
// each of stems once would get among n documents, of which df(stem) hold
// stem: the sum of the stems' IDF, those no document holds included. A
// hit's BM25 score divided by its query's mass is an absolute measure of
// how much of the query it matches (1: all of it, as an average document
// would), comparable across queries and stores, unlike a score divided by
// the best score of the same result list. 0 for an empty store.
func QueryMass(stems []string, n int64, df func(stem string) int64) float64 {
	if n <= 0 {
		return 0
	}
	var m float64
	for _, s := range stems {
		m += IDF(n, df(s))
	}
	return m
}

// Mass is QueryMass of q by the index's counts (false when the index is
// not ready: use Table.Mass).
func (ix *Index) Mass(q Query) (float64, bool) {
	if !ix.ready.Load() {
		return 0, false
	}
	stems, _ := q.Stems()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.mu.broken != nil {
		return 0, false
	}
	return QueryMass(stems, int64(ix.mu.live), ix.docFreqLocked), true
}

// Mass is QueryMass of q by FTS5's own counts (its totals record and
// vocabulary), for the searches Table.Search answers.
func (t *Table) Mass(ctx context.Context, q Querier, query Query) (float64, error) {
	stems, _ := query.Stems()
	if len(stems) == 0 {
		return 0, nil
	}
	n, err := t.DocCount(ctx, q)
	if err != nil || n == 0 {
		return 0, err
	}
	df, err := t.docFreqs(ctx, q, stems)
	if err != nil {
		return 0, err
	}
	return QueryMass(stems, n, func(s string) int64 { return df[s] }), nil
}
