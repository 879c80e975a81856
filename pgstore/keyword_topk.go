package pgstore

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// BM25 parameters of FTS5's bm25(), which the embedded store uses.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// boundSlack widens the score bounds against floating-point rounding: a
// bound must never fall below a score PostgreSQL computes.
const boundSlack = 1e-9

// queryTerm is one distinct query term with a document frequency.
type queryTerm struct {
	term string
	df   int64
	// bound is more than any one message's score from this term (all its
	// occurrences in the query): idf times the largest frequency factor
	// that the term's max_tf and min_len allow.
	bound float64
}

// keywordTopK returns the depth best BM25 hits of terms among the messages
// passing f, best first, ties by smaller id: the same hits and scores as
// scoring every message holding a query term.
//
// Scores come from keyword_postings (one index row per term and message:
// its frequency and the message's length), summed in query order. On top
// of that it is MaxScore: terms are taken by decreasing bound, and a
// round scores only the messages holding one of the first p terms (fully,
// with every query term). If the depth-th score θ of that round exceeds
// the sum of the bounds of the remaining terms, no message holding only
// those can reach θ, and the round's hits are the answer; otherwise p
// grows to the shortest prefix whose remainder is below θ (θ only rises
// as the set of scored messages grows, so that round is the last), or,
// when the round found fewer than depth hits, by a factor of the document
// count. A prefix holding more than half of the terms' postings is not
// worth a round: every term is read instead. With prune false every
// message holding a term is scored in one round (the tests' reference).
//
// Statistics and scores are read in one snapshot.
func (s *Store) keywordTopK(ctx context.Context, terms []string, f *where.Expr, depth int, prune bool) ([]engine.ScoredID, error) {
	out := []engine.ScoredID{}
	if len(terms) == 0 || depth <= 0 {
		return out, nil
	}
	args := &sqlArgs{}
	cond, err := filterSQL(f, args)
	if err != nil {
		return nil, err
	}
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		// Postings are read by their index, whatever the statistics say:
		// right after a bulk write they say nothing yet, and a sequential
		// scan of every posting is never the better plan.
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
		avgdl := float64(tokens) / float64(n)
		qts, err := queryTerms(ctx, tx, terms, float64(n), avgdl)
		if err != nil || len(qts) == 0 {
			return err
		}
		// Per occurrence, in query order, as the score sums them.
		idfOf := map[string]float64{}
		for _, qt := range qts {
			idfOf[qt.term] = idf(float64(n), float64(qt.df))
		}
		var qterms []string
		var idfs []float64
		for _, t := range terms {
			if v, ok := idfOf[t]; ok {
				qterms = append(qterms, t)
				idfs = append(idfs, v)
			}
		}
		slices.SortStableFunc(qts, func(a, b queryTerm) int {
			switch {
			case a.bound > b.bound:
				return -1
			case a.bound < b.bound:
				return 1
			}
			return 0
		})
		// rest[p] bounds the score of a message holding none of the first
		// p terms; cum[p] counts the messages holding one (at most).
		rest := make([]float64, len(qts)+1)
		cum := make([]int64, len(qts)+1)
		for i := len(qts) - 1; i >= 0; i-- {
			rest[i] = rest[i+1] + qts[i].bound
		}
		for i, qt := range qts {
			cum[i+1] = cum[i] + qt.df
		}
		// A round over a prefix probes every query term's postings for
		// its candidates: it pays only when the prefix holds far fewer
		// postings than all the terms do, else every term is read.
		total := cum[len(qts)]
		cheaper := func(p int) int {
			if cum[p]*2 > total {
				return len(qts)
			}
			return p
		}
		p := len(qts)
		if prune {
			p = cheaper(prefixHolding(cum, int64(2*depth)))
		}
		for {
			var match []string // nil: every term
			if p < len(qts) {
				for _, qt := range qts[:p] {
					match = append(match, qt.term)
				}
			}
			hits, err := scoreMatches(ctx, tx, qterms, idfs, avgdl, match, cond, args.vals, depth)
			if err != nil {
				return err
			}
			if p == len(qts) {
				out = hits
				return nil
			}
			if len(hits) < depth {
				p = cheaper(prefixHolding(cum, 4*cum[p]))
				continue
			}
			theta := hits[len(hits)-1].Score
			need := p
			for need < len(qts) && rest[need]*(1+boundSlack) >= theta {
				need++
			}
			if need <= p {
				out = hits
				return nil
			}
			p = cheaper(need)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: keyword search: %w", err)
	}
	return out, nil
}

// prefixHolding is the shortest prefix (at least 1) whose document
// counts sum to at least want, or all of them.
func prefixHolding(cum []int64, want int64) int {
	for p := 1; p < len(cum); p++ {
		if cum[p] >= want {
			return p
		}
	}
	return len(cum) - 1
}

// idf is FTS5's: log((N-n+0.5)/(n+0.5)), floored at 1e-6.
func idf(n, nHit float64) float64 {
	v := math.Log((n - nHit + 0.5) / (nHit + 0.5))
	if v <= 0 {
		v = 1e-6
	}
	return v
}

// queryTerms reads the statistics of terms (the distinct ones that some
// message holds) and computes each one's bound.
func queryTerms(ctx context.Context, tx pgx.Tx, terms []string, n, avgdl float64) ([]queryTerm, error) {
	occurs := map[string]int{}
	for _, t := range terms {
		occurs[t]++
	}
	rows, err := tx.Query(ctx, `SELECT term, sum(df)::bigint, max(max_tf), min(min_len) FROM keyword_terms
		WHERE term = ANY($1) GROUP BY term HAVING sum(df) > 0`, uniq(terms))
	if err != nil {
		return nil, err
	}
	var out []queryTerm
	for rows.Next() {
		var qt queryTerm
		var maxTF, minLen int32
		if err := rows.Scan(&qt.term, &qt.df, &maxTF, &minLen); err != nil {
			rows.Close()
			return nil, err
		}
		// The frequency factor f(k1+1)/(f+k1(1-b+b·d/avgdl)) grows with
		// f and shrinks with d: max_tf and min_len bound it.
		f, d := float64(maxTF), float64(max(minLen, 0))
		factor := f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*d/avgdl))
		qt.bound = float64(occurs[qt.term]) * idf(n, float64(qt.df)) * factor
		out = append(out, qt)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Query order, so that equal bounds keep a stable order.
	pos := map[string]int{}
	for i, t := range terms {
		if _, ok := pos[t]; !ok {
			pos[t] = i
		}
	}
	slices.SortFunc(out, func(a, b queryTerm) int { return pos[a.term] - pos[b.term] })
	return out, nil
}

// scoreMatches scores every message holding one of match (all terms when
// match is nil) and passing cond (over messages aliased m, with its
// arguments condArgs first) by BM25 over all of qterms, from
// keyword_postings, and returns the depth best. Each score is summed in
// query order, as the embedded store sums it.
func scoreMatches(ctx context.Context, tx pgx.Tx, qterms []string, idfs []float64, avgdl float64, match []string, cond string, condArgs []any, depth int) ([]engine.ScoredID, error) {
	args := &sqlArgs{vals: slices.Clone(condArgs)}
	pTerms, pIdfs, pAvg := args.add(qterms), args.add(idfs), args.add(avgdl)
	q := `WITH q AS (SELECT term, idf, ord FROM unnest(` + pTerms + `::text[], ` + pIdfs + `::float8[]) WITH ORDINALITY AS q(term, idf, ord)),
		s AS (SELECT p.message_id AS id,
				sum(q.idf * ((p.tf::float8 * 2.2::float8) / (p.tf::float8 + 1.2::float8 * (1::float8 - 0.75::float8 + (0.75::float8 * p.doc_len) / ` + pAvg + `::float8))) ORDER BY q.ord) AS score
			FROM q JOIN keyword_postings p ON p.term = q.term`
	if match != nil {
		// The candidates as one array: the postings of every query term
		// are then probed for those messages only.
		var ids []int64
		rows, err := tx.Query(ctx, "SELECT DISTINCT message_id FROM keyword_postings WHERE term = ANY($1::text[]) ORDER BY message_id", match)
		if err != nil {
			return nil, err
		}
		if ids, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
			return nil, err
		}
		q += ` AND p.message_id = ANY(` + args.add(ids) + `::bigint[])`
	}
	q += ` GROUP BY p.message_id)
		SELECT s.id, s.score FROM s`
	if cond != "true" {
		q += ` JOIN messages m ON m.id = s.id WHERE ` + cond
	}
	q += ` ORDER BY s.score DESC, s.id LIMIT ` + args.add(depth)
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
