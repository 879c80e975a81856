package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/fts"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// KeywordJoined is Keyword with every filter checked on the best scores
// rather than probed by id.
func (s *Store) KeywordJoined(ctx context.Context, terms []string, f *where.Expr, depth int) ([]engine.ScoredID, error) {
	return s.keywordSearch(ctx, terms, f, depth, 0)
}

// KeywordFromMessages is the reference of the keyword tests: document
// frequencies counted over the messages' term arrays and each matching
// message scored from its own term arrays, with no keyword_terms or
// keyword_postings involved.
func (s *Store) KeywordFromMessages(ctx context.Context, terms []string, f *where.Expr, depth int) ([]engine.ScoredID, error) {
	if len(terms) == 0 {
		return []engine.ScoredID{}, nil
	}
	var n, tokens int64
	if err := s.pool.QueryRow(ctx, "SELECT coalesce(sum(docs), 0), coalesce(sum(tokens), 0) FROM keyword_stats").Scan(&n, &tokens); err != nil {
		return nil, fmt.Errorf("postgres: keyword search: %w", err)
	}
	if n <= 0 {
		return []engine.ScoredID{}, nil
	}
	avgdl := float64(tokens) / float64(n)
	// Document frequencies over every message (as FTS5's idf), in one
	// pass over the messages holding any of the terms.
	distinct := uniq(terms)
	dfArgs := &sqlArgs{}
	counts := make([]string, len(distinct))
	for i, t := range distinct {
		counts[i] = "count(*) FILTER (WHERE terms @> ARRAY[" + dfArgs.add(t) + "::text])"
	}
	dfQuery := "SELECT " + strings.Join(counts, ", ") + " FROM messages WHERE terms && " + dfArgs.add(distinct) + "::text[]"
	got := make([]int64, len(distinct))
	dest := make([]any, len(distinct))
	for i := range got {
		dest[i] = &got[i]
	}
	if err := s.pool.QueryRow(ctx, dfQuery, dfArgs.vals...).Scan(dest...); err != nil {
		return nil, fmt.Errorf("postgres: keyword search: %w", err)
	}
	df := map[string]int64{}
	for i, t := range distinct {
		df[t] = got[i]
	}
	var qterms []string
	var idfs []float64
	var match []string
	for _, t := range terms {
		if df[t] == 0 {
			continue
		}
		qterms = append(qterms, t)
		idfs = append(idfs, fts.IDF(int64(n), df[t]))
		match = append(match, t)
	}
	if len(qterms) == 0 {
		return []engine.ScoredID{}, nil
	}
	args := &sqlArgs{}
	pTerms, pIdfs, pAvg := args.add(qterms), args.add(idfs), args.add(avgdl)
	pMatch := args.add(uniq(match))
	cond, err := filterSQL(f, args)
	if err != nil {
		return nil, err
	}
	// Each matching message scores only the query's terms: their
	// frequencies are looked up in the message's term array, not unnested.
	q := `WITH q AS (SELECT term, idf FROM unnest(` + pTerms + `::text[], ` + pIdfs + `::float8[]) AS q(term, idf))
		SELECT m.id, s.score FROM messages m
		CROSS JOIN LATERAL (
			SELECT sum(q.idf * ((t.tf * 2.2::float8) / (t.tf + 1.2::float8 * (1::float8 - 0.75::float8 + (0.75::float8 * m.doc_len) / ` + pAvg + `::float8)))) AS score
			FROM q CROSS JOIN LATERAL (SELECT m.tfs[array_position(m.terms, q.term)]::float8 AS tf) t
			WHERE t.tf IS NOT NULL) s
		WHERE m.terms && ` + pMatch + `::text[] AND ` + cond + `
		ORDER BY s.score DESC, m.id LIMIT ` + args.add(depth)
	return s.scored(ctx, "keyword search", q, args.vals...)
}

// KeywordTerms is Keyword over stemmed terms and a where expression, as
// the keyword tests compare it with KeywordFromMessages.
func (s *Store) KeywordTerms(ctx context.Context, terms []string, f *where.Expr, depth int) ([]engine.ScoredID, error) {
	return s.keyword(ctx, terms, f, depth)
}
