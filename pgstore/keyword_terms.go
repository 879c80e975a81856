package pgstore

import (
	"context"
	"math/rand/v2"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

// keywordTermShards is how many rows each term's statistics are spread
// over (see migrations/0002_keyword_terms.sql).
const keywordTermShards = 16

// termTotals is what one transaction adds to a term's statistics.
type termTotals struct {
	df            int64
	maxTF, minLen int32
}

// indexTerms adds the terms of the messages the transaction created
// (out[i].Created) to keyword_postings and keyword_terms, one statement
// each for the whole batch; keyword_terms in term order (every writer
// locks its rows in the same order), on one shard.
func indexTerms(ctx context.Context, tx pgx.Tx, docs []docTerms, out []engine.WriteResult) error {
	totals := map[string]*termTotals{}
	var pTerms []string
	var pIDs []int64
	var pTFs, pLens []int32
	for i, d := range docs {
		if !out[i].Created {
			continue
		}
		for j, t := range d.terms {
			if len(t) > maxLexemeBytes { // never searched, and too long for an index row
				continue
			}
			pTerms, pIDs = append(pTerms, t), append(pIDs, out[i].ID)
			pTFs, pLens = append(pTFs, d.tfs[j]), append(pLens, int32(d.length))
			tt := totals[t]
			if tt == nil {
				tt = &termTotals{maxTF: d.tfs[j], minLen: int32(d.length)}
				totals[t] = tt
			}
			tt.df++
			tt.maxTF = max(tt.maxTF, d.tfs[j])
			tt.minLen = min(tt.minLen, int32(d.length))
		}
	}
	if len(totals) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `INSERT INTO keyword_postings (term, message_id, tf, doc_len)
		SELECT * FROM unnest($1::text[], $2::bigint[], $3::integer[], $4::integer[])`, pTerms, pIDs, pTFs, pLens); err != nil {
		return err
	}
	terms := make([]string, 0, len(totals))
	for t := range totals {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	dfs := make([]int64, len(terms))
	maxTFs := make([]int32, len(terms))
	minLens := make([]int32, len(terms))
	for i, t := range terms {
		tt := totals[t]
		dfs[i], maxTFs[i], minLens[i] = tt.df, tt.maxTF, tt.minLen
	}
	_, err := tx.Exec(ctx, `INSERT INTO keyword_terms (term, shard, df, max_tf, min_len)
		SELECT u.term, $1, u.df, u.max_tf, u.min_len FROM unnest($2::text[], $3::bigint[], $4::integer[], $5::integer[]) AS u(term, df, max_tf, min_len)
		ON CONFLICT (term, shard) DO UPDATE SET df = keyword_terms.df + excluded.df,
			max_tf = greatest(keyword_terms.max_tf, excluded.max_tf), min_len = least(keyword_terms.min_len, excluded.min_len)`,
		rand.IntN(keywordTermShards), terms, dfs, maxTFs, minLens)
	return err
}
