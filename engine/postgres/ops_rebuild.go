package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

// rebuildBatch is how many messages RebuildKeywords reads at a time.
const rebuildBatch = 1000

// RebuildKeywords implements engine.Store: under a lock that lets
// readers through and makes writers wait, every message's terms are
// tokenized again in this process and written back, and the BM25 totals
// are set to their sums (shard 0 holds them, the others 0).
func (s *Store) RebuildKeywords(ctx context.Context) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "LOCK TABLE messages IN SHARE ROW EXCLUSIVE MODE"); err != nil {
			return err
		}
		var after, docs, tokens int64
		for {
			rows, err := tx.Query(ctx, "SELECT id, content FROM messages WHERE id > $1 ORDER BY id LIMIT $2", after, rebuildBatch)
			if err != nil {
				return err
			}
			var ids []int64
			var contents []string
			var id int64
			var content string
			if _, err := pgx.ForEachRow(rows, []any{&id, &content}, func() error {
				ids, contents = append(ids, id), append(contents, content)
				return nil
			}); err != nil {
				return err
			}
			if len(ids) == 0 {
				break
			}
			b := &pgx.Batch{}
			for i, id := range ids {
				d := termsOf(contents[i])
				b.Queue(`UPDATE messages SET terms = $2, tfs = $3, doc_len = $4 WHERE id = $1`,
					id, d.terms, d.tfs, d.length)
				docs, tokens = docs+1, tokens+int64(d.length)
			}
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
			after = ids[len(ids)-1]
		}
		if _, err := tx.Exec(ctx, "UPDATE keyword_stats SET docs = CASE shard WHEN 0 THEN $1 ELSE 0 END, tokens = CASE shard WHEN 0 THEN $2 ELSE 0 END", docs, tokens); err != nil {
			return err
		}
		return reindexTerms(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("postgres: rebuild keyword entries: %w", err)
	}
	return nil
}

// buildSet creates a building set of model (dim) with every message
// queued for it (one that exists already is returned instead), under the advisory lock of
// createSet.
func (s *Store) buildSet(ctx context.Context, model string, dim int, now time.Time) (engine.VectorSet, error) {
	var id int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", setLock); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, "SELECT id FROM vector_sets WHERE state = 'building' AND model_id = $1 AND dim = $2", model, dim).Scan(&id)
		if err == nil || !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO vector_sets (model_id, dim, state, created_at) VALUES ($1, $2, 'building', $3) RETURNING id`,
			model, dim, now.UnixMilli()).Scan(&id); err != nil {
			return err
		}
		if err := s.createSetTable(ctx, tx, id, dim); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "INSERT INTO vector_outbox (set_id, message_id) SELECT $1, id FROM messages", id)
		return err
	})
	if err != nil {
		return engine.VectorSet{}, fmt.Errorf("postgres: build vector set: %w", err)
	}
	sets, err := s.Sets(ctx)
	if err != nil {
		return engine.VectorSet{}, err
	}
	for _, v := range sets {
		if v.ID == id {
			return v, nil
		}
	}
	return engine.VectorSet{}, fmt.Errorf("postgres: build vector set %d: not live after creating it", id)
}

// activateSet makes the building set active and retires every other live
// set, dropping its vectors, once nothing is queued for it; false when
// something still is: the switch, the retirement
// and the drop of the retired sets' tables are one transaction.
func (s *Store) activateSet(ctx context.Context, set int64, now time.Time) (bool, error) {
	ok := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", setLock); err != nil {
			return err
		}
		var queued bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM vector_outbox WHERE set_id = $1)", set).Scan(&queued); err != nil || queued {
			return err
		}
		rows, err := tx.Query(ctx, "UPDATE vector_sets SET state = 'retired' WHERE id <> $1 AND state <> 'retired' RETURNING id", set)
		if err != nil {
			return err
		}
		retired, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		for _, r := range retired {
			if _, err := tx.Exec(ctx, "DELETE FROM vector_outbox WHERE set_id = $1", r); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "DROP TABLE IF EXISTS "+vectorTable(r)); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, "UPDATE vector_sets SET state = 'active', activated_at = $2 WHERE id = $1 AND state = 'building'", set, now.UnixMilli())
		ok = err == nil && tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("postgres: activate vector set %d: %w", set, err)
	}
	return ok, nil
}

// reindexTerms rebuilds the keyword search's postings and per-term
// document counts (migrations/0004_keyword_terms.sql) from the messages'
// terms, as that migration first built them.
func reindexTerms(ctx context.Context, tx pgx.Tx) error {
	for _, q := range []string{
		"DELETE FROM keyword_postings",
		"DELETE FROM keyword_terms",
		`INSERT INTO keyword_terms (term, shard, df)
		SELECT t.term, 0, count(*) FROM messages m CROSS JOIN LATERAL unnest(m.terms) AS t(term)
		WHERE octet_length(t.term) <= 2046 GROUP BY t.term`,
		`INSERT INTO keyword_postings (term, message_id, tf, doc_len)
		SELECT t.term, m.id, t.tf, m.doc_len FROM messages m CROSS JOIN LATERAL unnest(m.terms, m.tfs) AS t(term, tf)
		WHERE octet_length(t.term) <= 2046`,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}
