package postgres

import (
	"context"
	"math/rand/v2"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

// keywordTermShards is how many rows each term's statistics are spread
// over (see migrations/0004_keyword_terms.sql).
const keywordTermShards = 16

// indexTerms adds the terms of the messages the transaction created
// (out[i].Created) to keyword_postings and keyword_terms, one statement
// each for the whole batch; keyword_terms in term order (every writer
// locks its rows in the same order), on one shard.
func indexTerms(ctx context.Context, tx pgx.Tx, docs []docTerms, out []engine.WriteResult) error {
	dfOf := map[string]int64{}
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
			dfOf[t]++
		}
	}
	if len(dfOf) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `INSERT INTO keyword_postings (term, message_id, tf, doc_len)
		SELECT * FROM unnest($1::text[], $2::bigint[], $3::integer[], $4::integer[])`, pTerms, pIDs, pTFs, pLens); err != nil {
		return err
	}
	terms := sortedKeys(dfOf)
	dfs := make([]int64, len(terms))
	for i, t := range terms {
		dfs[i] = dfOf[t]
	}
	_, err := tx.Exec(ctx, `INSERT INTO keyword_terms (term, shard, df)
		SELECT u.term, $1, u.df FROM unnest($2::text[], $3::bigint[]) AS u(term, df)
		ON CONFLICT (term, shard) DO UPDATE SET df = keyword_terms.df + excluded.df`,
		rand.IntN(keywordTermShards), terms, dfs)
	return err
}
