package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/fts"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// keywordSearch returns the depth best BM25 hits of terms among the
// messages passing f, best first, ties by smaller id.
//
// Document frequencies come from keyword_terms (one read per term, not a
// count over the messages), scores from keyword_postings (one index row
// per term and message: its frequency and the message's length), summed
// in query order as the embedded store sums them. A filter that keeps at
// most fewKept messages is applied first, as a list of ids whose postings
// are probed; one that keeps more is checked on the best scores first,
// until depth of them pass. Statistics and scores are read in one
// snapshot.
//
// Top-k pruning (MaxScore over per-term bounds, scoring only the messages
// holding the terms that can still lift a message into the top depth)
// was measured slower than this one pass at the engine's depth of 100:
// the terms a query needs to reach 100 hits hold most of its postings.
func (s *Store) keywordSearch(ctx context.Context, terms []string, f *where.Expr, depth, fewKept int) ([]engine.ScoredID, error) {
	hits, _, _, err := s.rankTerms(ctx, terms, nil, f, depth, fewKept)
	return hits, err
}

// rankTerms is keywordSearch; with q it ranks q instead of terms, first
// dropping q's frequent terms (fts.DropFrequent) by the counts of the same
// snapshot, and returns the query that ranked. keyword_terms holds stems,
// so a plain term is counted only where it is its own stem, as FTS5's
// vocabulary counts it for the embedded store.
func (s *Store) rankTerms(ctx context.Context, terms []string, q *fts.Query, f *where.Expr, depth, fewKept int) ([]engine.ScoredID, fts.Query, float64, error) {
	var ranked fts.Query
	var mass float64
	lookup := terms
	if q != nil {
		ranked = *q
		terms, _ = q.Stems()
		lookup = append(slices.Clone(q.Terms()), terms...)
	}
	out := []engine.ScoredID{}
	if len(terms) == 0 || depth <= 0 {
		return out, ranked, 0, nil
	}
	args := &sqlArgs{}
	cond, err := filterSQL(f, args)
	if err != nil {
		return nil, ranked, 0, err
	}
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		// Postings are read by their index, term by term, whatever the
		// statistics say: right after a bulk write they say nothing yet,
		// and the planner would then scan every posting.
		if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
			return err
		}
		var n, tokens int64
		if err := tx.QueryRow(ctx, "SELECT coalesce(sum(docs), 0), coalesce(sum(tokens), 0) FROM keyword_stats").Scan(&n, &tokens); err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		rows, err := tx.Query(ctx, "SELECT term, sum(df)::bigint FROM keyword_terms WHERE term = ANY($1) GROUP BY term HAVING sum(df) > 0", uniq(lookup))
		if err != nil {
			return err
		}
		dfOf := map[string]int64{}
		var term string
		var df int64
		if _, err := pgx.ForEachRow(rows, []any{&term, &df}, func() error {
			dfOf[term] = df
			return nil
		}); err != nil {
			return err
		}
		if q != nil {
			ranked = fts.DropFrequent(*q, n, func(t string) int64 { return dfOf[t] })
			terms, _ = ranked.Stems()
		}
		mass = fts.QueryMass(terms, n, func(t string) int64 { return dfOf[t] })
		// Per occurrence, in query order, as the score sums them.
		var qterms []string
		var idfs []float64
		for _, t := range terms {
			if d, ok := dfOf[t]; ok {
				qterms = append(qterms, t)
				idfs = append(idfs, fts.IDF(n, d))
			}
		}
		if len(qterms) == 0 {
			return nil
		}
		out, err = scorePostings(ctx, tx, qterms, idfs, float64(tokens)/float64(n), cond, args.vals, depth, fewKept)
		return err
	})
	if err != nil {
		return nil, ranked, 0, fmt.Errorf("postgres: keyword search: %w", err)
	}
	return out, ranked, mass, nil
}

// fewKept is the most messages a filter may keep for their ids to be
// probed one by one (keywordSearch).
const fewKept = 4096

// scorePostings scores every message holding one of qterms and passing
// cond (over messages aliased m, with its arguments condArgs first) by
// BM25 from keyword_postings, and returns the depth best.
func scorePostings(ctx context.Context, tx pgx.Tx, qterms []string, idfs []float64, avgdl float64, cond string, condArgs []any, depth, fewKept int) ([]engine.ScoredID, error) {
	var kept []int64
	joinFilter := false
	if cond != "true" {
		rows, err := tx.Query(ctx, "SELECT m.id FROM messages m WHERE "+cond+" ORDER BY m.id LIMIT "+strconv.Itoa(fewKept+1), condArgs...)
		if err != nil {
			return nil, err
		}
		if kept, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
			return nil, err
		}
		if len(kept) == 0 {
			return []engine.ScoredID{}, nil
		}
		joinFilter = len(kept) > fewKept
	}
	args := &sqlArgs{}
	if joinFilter { // cond's placeholders come first
		args.vals = slices.Clone(condArgs)
	}
	pTerms, pIdfs, pAvg := args.add(qterms), args.add(idfs), args.add(avgdl)
	// FTS5's constants (k1 1.2, b 0.75), in float8 as the embedded store
	// computes them.
	q := `WITH q AS (SELECT term, idf, ord FROM unnest(` + pTerms + `::text[], ` + pIdfs + `::float8[]) WITH ORDINALITY AS q(term, idf, ord)),
		s AS (SELECT p.message_id AS id,
				sum(q.idf * ((p.tf::float8 * 2.2::float8) / (p.tf::float8 + 1.2::float8 * (1::float8 - 0.75::float8 + (0.75::float8 * p.doc_len) / ` + pAvg + `::float8))) ORDER BY q.ord) AS score
			FROM q JOIN keyword_postings p ON p.term = q.term`
	if kept != nil && !joinFilter {
		q += ` WHERE p.message_id = ANY(` + args.add(kept) + `::bigint[])`
	}
	q += ` GROUP BY p.message_id)`
	if joinFilter {
		// Best first, each checked by its primary key until depth pass:
		// a wide filter passes most, so few are checked.
		q += ` SELECT o.id, o.score FROM (SELECT s.id, s.score FROM s ORDER BY s.score DESC, s.id) o
			WHERE EXISTS (SELECT 1 FROM messages m WHERE m.id = o.id AND ` + cond + `)`
	} else {
		q += ` SELECT s.id, s.score FROM s`
	}
	q += ` ORDER BY 2 DESC, 1 LIMIT ` + args.add(depth)
	rows, err := tx.Query(ctx, q, args.vals...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.ScoredID, error) {
		var h engine.ScoredID
		err := r.Scan(&h.ID, &h.Score)
		return h, err
	})
}
