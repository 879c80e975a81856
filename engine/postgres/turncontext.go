package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

// Neighbours implements engine.Store in one query, through
// messages_channel_time as Replies. Under a filter served after the SQL
// (postFiltered) it could not say whether a neighbour passes: no
// neighbours then, so a search keeps each message's own similarity.
func (s *Store) Neighbours(ctx context.Context, ids []int64, within time.Duration, f engine.Selection) (map[int64]engine.TurnNeighbours, error) {
	out := map[int64]engine.TurnNeighbours{}
	if len(ids) == 0 || postFiltered(f) {
		return out, nil
	}
	args := &sqlArgs{}
	pIDs, pWithin := args.add(ids), args.add(within.Milliseconds())
	cond, err := filterSQL(f.Where, args)
	if err != nil {
		return nil, err
	}
	q := `SELECT a.id, p.id, p.sender_id <> a.sender_id AND a.created_at - p.created_at <= ` + pWithin + `,
		m.id, m.sender_id <> a.sender_id AND m.created_at - a.created_at <= ` + pWithin + `, ` + cond + `
		FROM messages a
		LEFT JOIN LATERAL (SELECT x.id, x.sender_id, x.created_at FROM messages x
			WHERE x.channel_id = a.channel_id AND (x.created_at, x.id) < (a.created_at, a.id)
			ORDER BY x.created_at DESC, x.id DESC LIMIT 1) p ON true
		LEFT JOIN LATERAL (SELECT x.id FROM messages x
			WHERE x.channel_id = a.channel_id AND (x.created_at, x.id) > (a.created_at, a.id)
			ORDER BY x.created_at, x.id LIMIT 1) n ON true
		LEFT JOIN messages m ON m.id = n.id
		WHERE a.id = ANY(` + pIDs + `)`
	rows, err := s.pool.Query(ctx, q, args.vals...)
	if err != nil {
		return nil, fmt.Errorf("postgres: turn neighbours: %w", err)
	}
	var a int64
	var p, n *int64
	var pOK, nOK, nPasses *bool
	if _, err := pgx.ForEachRow(rows, []any{&a, &p, &pOK, &n, &nOK, &nPasses}, func() error {
		if nb, ok := engine.TurnNeighboursOf(p, pOK, n, nOK, nPasses); ok {
			out[a] = nb
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("postgres: turn neighbours: %w", err)
	}
	return out, nil
}

// SetVectors implements engine.Store.
func (s *Store) SetVectors(ctx context.Context, set engine.VectorSet, ids []int64) (map[int64][]float32, error) {
	return s.Vectors(ctx, set.ID, ids)
}
