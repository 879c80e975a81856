package pgstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// Keyword implements engine.Backend: BM25 as fts.Index computes it.
func (s *Store) Keyword(ctx context.Context, terms []string, f *where.Expr, depth int) ([]engine.ScoredID, error) {
	return s.keywordSearch(ctx, terms, f, depth, fewKept)
}

func (s *Store) scored(ctx context.Context, what, q string, args ...any) ([]engine.ScoredID, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.ScoredID, error) {
		var h engine.ScoredID
		err := r.Scan(&h.ID, &h.Score)
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: %s: %w", what, err)
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

// tsquery is the tsquery matching any of terms, each quoted as one
// lexeme (no parsing or normalization by PostgreSQL).
func tsquery(terms []string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = quoteLexeme(t)
	}
	return strings.Join(parts, " | ")
}

func quoteLexeme(t string) string {
	t = strings.ReplaceAll(t, `\`, `\\`)
	return "'" + strings.ReplaceAll(t, "'", "''") + "'"
}

// vectorText is v in pgvector's text form; float32 values round-trip.
func vectorText(v []float32) string {
	b := make([]byte, 0, len(v)*10+2)
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
	}
	return string(append(b, ']'))
}

// Nearest implements engine.Backend.
func (s *Store) Nearest(ctx context.Context, set int64, q []float32, f *where.Expr, k int) ([]engine.ScoredID, error) {
	args := &sqlArgs{}
	pq := args.add(vectorText(q))
	cond, err := filterSQL(f, args)
	if err != nil {
		return nil, err
	}
	table := vectorTable(set)
	sqlq := `SELECT v.message_id, 1 - (v.embedding <=> ` + pq + `::vector) FROM ` + table + ` v`
	if f != nil {
		sqlq += ` JOIN messages m ON m.id = v.message_id WHERE ` + cond
	}
	sqlq += ` ORDER BY v.embedding <=> ` + pq + `::vector LIMIT ` + args.add(k)
	var out []engine.ScoredID
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT set_config('hnsw.ef_search', $1, true)", strconv.Itoa(max(s.opts.EfSearch, k))); err != nil {
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
		return nil, fmt.Errorf("pgstore: vector search: %w", err)
	}
	return out, nil
}

// Similarities implements engine.Backend.
func (s *Store) Similarities(ctx context.Context, set int64, q []float32, ids []int64) (map[int64]float64, error) {
	hits, err := s.scored(ctx, "similarities", `SELECT message_id, 1 - (embedding <=> $1::vector) FROM `+vectorTable(set)+` WHERE message_id = ANY($2)`,
		vectorText(q), ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]float64, len(hits))
	for _, h := range hits {
		out[h.ID] = h.Score
	}
	return out, nil
}

func vectorTable(set int64) string { return "vectors_" + strconv.FormatInt(set, 10) }
