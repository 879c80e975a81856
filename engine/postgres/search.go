package postgres

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/fts"
	"github.com/cairn-dev/cairn/internal/pgvector"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// keywordWhere is Keyword by f.Where alone: BM25 over q's stems as fts.Index
// computes it, without the terms found in more than half of the messages
// when another term remains (fts.DropFrequent, as the embedded store drops
// them).
func (s *Store) keywordWhere(ctx context.Context, q fts.Query, f engine.Selection, depth int) (engine.KeywordHits, error) {
	hits, ranked, mass, err := s.rankTerms(ctx, nil, &q, f.Where, depth, fewKept)
	return engine.KeywordHits{Hits: hits, Query: ranked, Mass: mass}, err
}

// keyword is Keyword over stemmed terms.
func (s *Store) keyword(ctx context.Context, terms []string, f *where.Expr, depth int) ([]engine.ScoredID, error) {
	return s.keywordSearch(ctx, terms, f, depth, fewKept)
}

func (s *Store) scored(ctx context.Context, what, q string, args ...any) ([]engine.ScoredID, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.ScoredID, error) {
		var h engine.ScoredID
		err := r.Scan(&h.ID, &h.Score)
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, err)
	}
	return out, nil
}

func uniq(ts []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// nearestWhere is Nearest by sel.Where alone.
func (s *Store) nearestWhere(ctx context.Context, set engine.VectorSet, q []float32, sel engine.Selection, k int) ([]engine.ScoredID, error) {
	f := sel.Where
	args := &sqlArgs{}
	pq := args.add(pgvector.Text(q))
	cond, err := filterSQL(f, args)
	if err != nil {
		return nil, err
	}
	table := vectorTable(set.ID)
	sqlq := `SELECT v.message_id, 1 - (v.embedding <=> ` + pq + `::vector) FROM ` + table + ` v`
	if f != nil {
		sqlq += ` JOIN messages m ON m.id = v.message_id WHERE ` + cond
	}
	sqlq += ` ORDER BY v.embedding <=> ` + pq + `::vector LIMIT ` + args.add(k)
	var out []engine.ScoredID
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT set_config('hnsw.ef_search', $1, true)", strconv.Itoa(efSearch(s.opts.EfSearch, k))); err != nil {
			return err
		}
		if s.iterative {
			if _, err := tx.Exec(ctx, "SET LOCAL hnsw.iterative_scan = strict_order"); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, sqlq, args.vals...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.ScoredID, error) {
			var h engine.ScoredID
			err := r.Scan(&h.ID, &h.Score)
			return h, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: vector search: %w", err)
	}
	return out, nil
}

// Similarities implements engine.Store.
func (s *Store) Similarities(ctx context.Context, set engine.VectorSet, q []float32, ids []int64) (map[int64]float64, error) {
	hits, err := s.scored(ctx, "similarities", `SELECT message_id, 1 - (embedding <=> $1::vector) FROM `+vectorTable(set.ID)+` WHERE message_id = ANY($2)`,
		pgvector.Text(q), ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]float64, len(hits))
	for _, h := range hits {
		out[h.ID] = h.Score
	}
	return out, nil
}

// repliesWhere is Replies by f.Where alone: each asker's next message in its
// channel (m) is found through messages_channel_time, then kept when it
// is a reply and passes f.
func (s *Store) repliesWhere(ctx context.Context, askers []int64, within time.Duration, f engine.Selection) ([]engine.Reply, error) {
	if len(askers) == 0 {
		return nil, nil
	}
	args := &sqlArgs{}
	pAskers, pWithin := args.add(askers), args.add(within.Milliseconds())
	cond, err := filterSQL(f.Where, args)
	if err != nil {
		return nil, err
	}
	q := `SELECT a.id, m.id FROM messages a
		CROSS JOIN LATERAL (SELECT x.id FROM messages x
			WHERE x.channel_id = a.channel_id AND (x.created_at, x.id) > (a.created_at, a.id)
			ORDER BY x.created_at, x.id LIMIT 1) n
		JOIN messages m ON m.id = n.id
		WHERE a.id = ANY(` + pAskers + `) AND strpos(a.content, '?') > 0
		AND m.sender_id <> a.sender_id AND m.created_at - a.created_at <= ` + pWithin + ` AND ` + cond
	rows, err := s.pool.Query(ctx, q, args.vals...)
	if err != nil {
		return nil, fmt.Errorf("postgres: replies: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.Reply, error) {
		var p engine.Reply
		err := r.Scan(&p.Asker, &p.Reply)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: replies: %w", err)
	}
	return out, nil
}

// efSearch is hnsw.ef_search for k nearest: at least twice k, as the
// embedded store's float32 search widens its beam, within pgvector's
// 1,000.
func efSearch(configured, k int) int { return min(1000, max(configured, 2*k)) }

func vectorTable(set int64) string { return "vectors_" + strconv.FormatInt(set, 10) }
