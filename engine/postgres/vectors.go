package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/internal/pgvector"
)

// setLock is the advisory lock key under which vector sets are created.
const setLock = 0x63617273 // "cars"

// Sets implements engine.Store.
func (s *Store) Sets(ctx context.Context) ([]engine.VectorSet, error) {
	rows, err := s.pool.Query(ctx, `SELECT s.id, s.model_id, s.dim, s.state, s.created_at, s.activated_at,
		(SELECT count(*) FROM vector_outbox o WHERE o.set_id = s.id)
		FROM vector_sets s WHERE s.state <> 'retired' ORDER BY s.id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: vector sets: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.VectorSet, error) {
		var v engine.VectorSet
		var created, activated int64
		err := r.Scan(&v.ID, &v.ModelID, &v.Dim, &v.State, &created, &activated, &v.Pending)
		v.CreatedAt = time.UnixMilli(created).UTC()
		if activated != 0 {
			v.ActivatedAt = time.UnixMilli(activated).UTC()
		}
		v.Collection = vectorTable(v.ID)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: vector sets: %w", err)
	}
	return out, nil
}

// AllSets implements engine.Store with the live sets: a set's vectors and
// outbox rows are dropped when it retires (activateSet), and VectorSets
// lists what a store holds.
func (s *Store) AllSets(ctx context.Context) ([]engine.VectorSet, error) {
	return s.Sets(ctx)
}

// createSet creates the active vector set of model (dim) with every
// stored message queued for it, unless a live set exists: it then
// returns that one. Under an advisory lock, so that
// processes starting together create one set.
func (s *Store) createSet(ctx context.Context, model string, dim int, now time.Time) (engine.VectorSet, error) {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", setLock); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM vector_sets WHERE state <> 'retired'").Scan(&n); err != nil || n > 0 {
			return err
		}
		var id int64
		if err := tx.QueryRow(ctx, `INSERT INTO vector_sets (model_id, dim, state, created_at, activated_at)
			VALUES ($1, $2, 'active', $3, $3) RETURNING id`, model, dim, now.UnixMilli()).Scan(&id); err != nil {
			return err
		}
		if err := s.createSetTable(ctx, tx, id, dim); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO vector_outbox (set_id, message_id) SELECT $1, id FROM messages", id)
		return err
	})
	if err != nil {
		return engine.VectorSet{}, fmt.Errorf("postgres: create vector set: %w", err)
	}
	sets, err := s.Sets(ctx)
	if err != nil {
		return engine.VectorSet{}, err
	}
	if len(sets) == 0 {
		return engine.VectorSet{}, errors.New("postgres: create vector set: no live set after creating one")
	}
	return sets[len(sets)-1], nil
}

// claim leases up to n queued messages of set for lease (no other caller
// gets them until it runs out) and returns them.
func (s *Store) claim(ctx context.Context, set int64, n int, lease time.Duration) ([]engine.QueuedMessage, error) {
	now := time.Now().UnixMilli()
	rows, err := s.pool.Query(ctx, `WITH c AS (
			SELECT message_id FROM vector_outbox WHERE set_id = $1 AND lease_until < $2
			ORDER BY message_id LIMIT $3 FOR UPDATE SKIP LOCKED),
		u AS (
			UPDATE vector_outbox o SET lease_until = $4 FROM c
			WHERE o.set_id = $1 AND o.message_id = c.message_id RETURNING o.message_id)
		SELECT m.id, m.content, m.sender_id, m.created_at FROM u JOIN messages m ON m.id = u.message_id ORDER BY m.id`,
		set, now, n, now+lease.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("postgres: vector outbox: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.QueuedMessage, error) {
		var q engine.QueuedMessage
		var created int64
		err := r.Scan(&q.ID, &q.Content, &q.Sender, &created)
		q.CreatedAt = time.UnixMilli(created).UTC()
		return q, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: vector outbox: %w", err)
	}
	return out, nil
}

// putVectors stores the vectors of claimed messages (vecs[i] of ids[i])
// in set and removes their outbox rows, in one transaction. A message
// deleted since it was claimed is skipped.
func (s *Store) putVectors(ctx context.Context, set int64, ids []int64, vecs [][]float32) error {
	texts := make([]string, len(vecs))
	for i, v := range vecs {
		texts[i] = pgvector.Text(v)
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO `+vectorTable(set)+` (message_id, embedding)
			SELECT x.id, x.e::vector FROM unnest($1::bigint[], $2::text[]) AS x(id, e)
			WHERE EXISTS (SELECT 1 FROM messages m WHERE m.id = x.id)
			ON CONFLICT (message_id) DO UPDATE SET embedding = excluded.embedding`, ids, texts); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM vector_outbox WHERE set_id = $1 AND message_id = ANY($2)", set, ids)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: store vectors: %w", err)
	}
	return nil
}

// Pending implements engine.Store.
func (s *Store) Pending(ctx context.Context, set int64, ids []int64) (map[int64]bool, error) {
	return s.idsWhere(ctx, "vector outbox", "SELECT message_id FROM vector_outbox WHERE set_id = $1 AND message_id = ANY($2)", set, ids)
}

// createSetTable creates the vector table of set id (dimension dim) and
// its HNSW index, in tx.
func (s *Store) createSetTable(ctx context.Context, tx pgx.Tx, id int64, dim int) error {
	table := vectorTable(id)
	if _, err := tx.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (
		message_id bigint PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
		embedding  vector(%d) NOT NULL)`, table, dim)); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, fmt.Sprintf(`CREATE INDEX %s_hnsw ON %s USING hnsw (embedding vector_cosine_ops) WITH (m = %d, ef_construction = %d)`,
		table, table, s.opts.M, s.opts.EfConstruction))
	return err
}
