package sqlite

import (
	"context"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// The embedded store's turn context: neighbours in SQL, vectors from vecstore.

func (s *Store) SetVectors(ctx context.Context, set engine.VectorSet, ids []int64) (map[int64][]float32, error) {
	return s.vectorsOf(ctx, set, ids)
}

// Neighbours reads them in one query.
func (s *Store) Neighbours(ctx context.Context, ids []int64, within time.Duration, f engine.Selection) (map[int64]engine.TurnNeighbours, error) {
	passes := "1"
	cond, fargs, err := selectionSQL(f)
	if err != nil {
		return nil, err
	}
	if cond != "" {
		// The filter's SQL names the message c.
		passes = cond
	}
	ms := within.Milliseconds()
	q := `SELECT a.id, p.id, p.sender_id <> a.sender_id AND a.created_at - p.created_at <= ?,
		c.id, c.sender_id <> a.sender_id AND c.created_at - a.created_at <= ?, ` + passes + `
		FROM messages a
		LEFT JOIN messages p ON p.id = (SELECT x.id FROM messages x
			WHERE x.channel_id = a.channel_id AND (x.created_at, x.id) < (a.created_at, a.id)
			ORDER BY x.created_at DESC, x.id DESC LIMIT 1)
		LEFT JOIN messages c ON c.id = (SELECT x.id FROM messages x
			WHERE x.channel_id = a.channel_id AND (x.created_at, x.id) > (a.created_at, a.id)
			ORDER BY x.created_at, x.id LIMIT 1)
		WHERE a.id IN (` + placeholders(len(ids)) + `)`
	args := append([]any{ms, ms}, fargs...)
	args = append(args, int64Args(ids)...)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("engine: search: %w", classify(err))
	}
	defer rows.Close()
	out := map[int64]engine.TurnNeighbours{}
	for rows.Next() {
		var a int64
		var p, n *int64
		var pOK, nOK, nPasses *bool
		if err := rows.Scan(&a, &p, &pOK, &n, &nOK, &nPasses); err != nil {
			return nil, fmt.Errorf("engine: search: %w", classify(err))
		}
		if nb, ok := engine.TurnNeighboursOf(p, pOK, n, nOK, nPasses); ok {
			out[a] = nb
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("engine: search: %w", classify(err))
	}
	return out, nil
}

// vectorsOf returns the stored vectors of those of ids that have one.
func (st *Store) vectorsOf(ctx context.Context, s engine.VectorSet, ids []int64) (map[int64][]float32, error) {
	out := map[int64][]float32{}
	if len(ids) == 0 {
		return out, nil
	}
	coll, err := st.collection(ctx, s, false)
	if errors.Is(err, chroma.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	strIDs := make([]string, len(ids))
	for i, id := range ids {
		strIDs[i] = strconv.FormatInt(id, 10)
	}
	got, err := st.vec.store.Get(ctx, coll, chroma.GetRequest{IDs: strIDs, Include: []chroma.Include{chroma.IncludeEmbeddings}})
	if err != nil {
		return nil, fmt.Errorf("engine: vectors: %w", err)
	}
	for i, sid := range got.IDs {
		id, err := strconv.ParseInt(sid, 10, 64)
		if err != nil || i >= len(got.Embeddings) {
			continue
		}
		out[id] = got.Embeddings[i]
	}
	return out, nil
}
