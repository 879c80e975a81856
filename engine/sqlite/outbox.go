package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
	"time"
)

// Outbox operations (vector_outbox.op).
const (
	opUpsert = 0
	opDelete = 1
)

// outboxLease is how long a worker owns claimed outbox rows. A process
// that dies while embedding leaves its rows to the next worker once the
// lease ends.
const outboxLease = 60 * time.Second

// outboxAddTx records, inside the transaction that stores message id, that
// every set still in use needs its vector. With no set (no embedder ever
// configured) it writes nothing: the rows are added when a set is created.
func (s *Store) outboxAddTx(ctx context.Context, tx *sql.Tx, id int64) error {
	if _, err := tx.ExecContext(ctx,
		"INSERT INTO vector_outbox (set_id, message_id, op) SELECT id, ?, 0 FROM vector_sets WHERE state <> 'retired' ON CONFLICT DO NOTHING", id); err != nil {
		return fmt.Errorf("engine: vector outbox: %w", classify(err))
	}
	return nil
}

// outboxDeleteTx records, inside the transaction that deletes message id,
// that its vector must go from every set.
func (s *Store) outboxDeleteTx(ctx context.Context, tx *sql.Tx, id int64) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO vector_outbox (set_id, message_id, op)
		SELECT id, ?, 1 FROM vector_sets WHERE state <> 'retired'
		ON CONFLICT (set_id, message_id) DO UPDATE SET op = 1, lease_until = 0`, id); err != nil {
		return fmt.Errorf("engine: vector outbox: %w", classify(err))
	}
	return nil
}

func collectionName(setID int64, model string) string {
	sum := sha256.Sum256([]byte(model))
	return fmt.Sprintf("messages-%d-%s", setID, hex.EncodeToString(sum[:6]))
}

// createSet registers a new vector set for model (state SetActive when no
// set is active, else SetBuilding) and queues every stored message for it,
// in one transaction. If a building set for model exists it is returned
// instead (a rebuild resumes it), and so is an active one when
// reuseActive is set (opening a store: another process may have created
// the model's first set since this one looked).
func (st *Store) createSet(ctx context.Context, model string, dim int, reuseActive bool) (engine.VectorSet, error) {
	tx, err := st.w.BeginTx(ctx, nil)
	if err != nil {
		return engine.VectorSet{}, fmt.Errorf("engine: vector set: %w", classify(err))
	}
	defer tx.Rollback()
	var s engine.VectorSet
	// Looked for under the write lock, so that processes opening one store
	// at the same moment agree on the set.
	err = tx.QueryRowContext(ctx, "SELECT id FROM vector_sets WHERE model_id = ? AND (state = 'building' OR (? AND state = 'active')) ORDER BY state = 'active' DESC LIMIT 1", model, reuseActive).Scan(&s.ID)
	if err == nil {
		tx.Rollback() // the writer pool has one connection: free it first
		return st.getSet(ctx, s.ID)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return engine.VectorSet{}, fmt.Errorf("engine: vector set: %w", classify(err))
	}
	var active int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM vector_sets WHERE state = 'active'").Scan(&active); err != nil {
		return engine.VectorSet{}, fmt.Errorf("engine: vector set: %w", classify(err))
	}
	state := engine.SetBuilding
	now := st.opts.Now().UnixMilli()
	var activated int64
	if active == 0 {
		state, activated = engine.SetActive, now
	}
	// The collection name needs the id: insert with a unique placeholder first.
	placeholder := fmt.Sprintf("pending-%d-%d", now, st.opts.Now().UnixNano())
	if err := tx.QueryRowContext(ctx, "INSERT INTO vector_sets (model_id, dim, collection, state, created_at, activated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
		model, dim, placeholder, state, now, activated).Scan(&s.ID); err != nil {
		return engine.VectorSet{}, fmt.Errorf("engine: vector set: %w", classify(err))
	}
	if _, err := tx.ExecContext(ctx, "UPDATE vector_sets SET collection = ? WHERE id = ?", collectionName(s.ID, model), s.ID); err != nil {
		return engine.VectorSet{}, fmt.Errorf("engine: vector set: %w", classify(err))
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO vector_outbox (set_id, message_id, op) SELECT ?, id, 0 FROM messages ORDER BY id", s.ID); err != nil {
		return engine.VectorSet{}, fmt.Errorf("engine: vector set: %w", classify(err))
	}
	if err := tx.Commit(); err != nil {
		return engine.VectorSet{}, fmt.Errorf("engine: vector set: %w", classify(err))
	}
	st.opts.Logger.Info("created vector set", "id", s.ID, "model", model, "dim", dim, "state", state)
	return st.getSet(ctx, s.ID)
}

const setColumns = "id, model_id, dim, collection, state, created_at, activated_at"

func scanSet(r rowScanner) (engine.VectorSet, error) {
	var s engine.VectorSet
	var created, activated int64
	if err := r.Scan(&s.ID, &s.ModelID, &s.Dim, &s.Collection, &s.State, &created, &activated); err != nil {
		return s, err
	}
	s.CreatedAt = fromMillis(created)
	if activated > 0 {
		s.ActivatedAt = fromMillis(activated)
	}
	return s, nil
}

func (st *Store) getSet(ctx context.Context, id int64) (engine.VectorSet, error) {
	s, err := scanSet(st.w.QueryRowContext(ctx, "SELECT "+setColumns+" FROM vector_sets WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("vector set %d: %w", id, engine.ErrNotFound)
	}
	if err != nil {
		return s, fmt.Errorf("engine: vector set: %w", classify(err))
	}
	return s, nil
}

// liveSets returns the sets that are not retired, active first.
func (st *Store) liveSets(ctx context.Context, db *sql.DB) ([]engine.VectorSet, error) {
	return queryAll(ctx, db, "vector sets", "SELECT "+setColumns+" FROM vector_sets WHERE state <> 'retired' ORDER BY state = 'active' DESC, id", nil,
		func(rows *sql.Rows) (engine.VectorSet, error) { return scanSet(rows) })
}

// AllSets returns every set, the retired ones too, each with all its
// outbox rows (deletions included).
func (s *Store) AllSets(ctx context.Context) ([]engine.VectorSet, error) {
	return queryAll(ctx, s.r, "vector sets", "SELECT "+setColumns+", (SELECT count(*) FROM vector_outbox o WHERE o.set_id = s.id) FROM vector_sets s ORDER BY id", nil,
		func(rows *sql.Rows) (s engine.VectorSet, err error) {
			var created, activated int64
			err = rows.Scan(&s.ID, &s.ModelID, &s.Dim, &s.Collection, &s.State, &created, &activated, &s.Pending)
			s.CreatedAt = fromMillis(created)
			if activated > 0 {
				s.ActivatedAt = fromMillis(activated)
			}
			return s, err
		})
}

type outboxRow struct {
	id int64
	op int
}

// claim leases up to n outbox rows of set whose lease has ended; with
// deletesOnly it claims only deletions (a process without the set's model
// can still remove vectors). It returns the rows and the lease value that
// complete must match.
func (s *Store) claim(ctx context.Context, set int64, n int, deletesOnly bool) ([]outboxRow, int64, error) {
	// Leases are about real processes: wall time, not the injected clock.
	now := time.Now().UnixMilli()
	lease := now + outboxLease.Milliseconds()
	opCond := ""
	if deletesOnly {
		opCond = " AND op = 1"
	}
	rows, err := s.w.QueryContext(ctx, `UPDATE vector_outbox SET lease_until = ?1 WHERE set_id = ?2 AND message_id IN
		(SELECT message_id FROM vector_outbox WHERE set_id = ?2 AND lease_until <= ?3`+opCond+` ORDER BY message_id LIMIT ?4)
		RETURNING message_id, op`, lease, set, now, n)
	if err != nil {
		return nil, 0, fmt.Errorf("engine: vector outbox: %w", classify(err))
	}
	defer rows.Close()
	var out []outboxRow
	for rows.Next() {
		var r outboxRow
		if err := rows.Scan(&r.id, &r.op); err != nil {
			return nil, 0, fmt.Errorf("engine: vector outbox: %w", classify(err))
		}
		out = append(out, r)
	}
	return out, lease, classify(rows.Err())
}

// complete removes rows whose work is durable in vecstore; rows re-queued
// meanwhile (an op change resets the lease) stay.
func (s *Store) complete(ctx context.Context, set int64, ids []int64, lease int64) error {
	if len(ids) == 0 {
		return nil
	}
	args := []any{set, lease}
	for _, id := range ids {
		args = append(args, id)
	}
	_, err := s.w.ExecContext(ctx, "DELETE FROM vector_outbox WHERE set_id = ? AND lease_until = ? AND message_id IN ("+placeholders(len(ids))+")", args...)
	if err != nil {
		return fmt.Errorf("engine: vector outbox: %w", classify(err))
	}
	return nil
}

// release gives claimed rows back (after a failure) so they are retried
// without waiting for the lease.
func (s *Store) release(ctx context.Context, set int64, ids []int64, lease int64) {
	if len(ids) == 0 {
		return
	}
	args := []any{set, lease}
	for _, id := range ids {
		args = append(args, id)
	}
	if _, err := s.w.ExecContext(context.WithoutCancel(ctx), "UPDATE vector_outbox SET lease_until = 0 WHERE set_id = ? AND lease_until = ? AND message_id IN ("+placeholders(len(ids))+")", args...); err != nil {
		s.opts.Logger.Warn("vector outbox: release failed", "err", err)
	}
}

// pendingIDs returns which of ids still wait for their vector in set.
func (s *Store) pendingIDs(ctx context.Context, set int64, ids []int64) (map[int64]bool, error) {
	if len(ids) == 0 {
		return map[int64]bool{}, nil
	}
	args := []any{set}
	for _, id := range ids {
		args = append(args, id)
	}
	return querySet[int64](ctx, s.r, "vector outbox", "SELECT message_id FROM vector_outbox WHERE set_id = ? AND op = 0 AND message_id IN ("+placeholders(len(ids))+")", args...)
}

// promote makes building set id active once its outbox is empty, retiring
// the set it replaces. It reports whether it switched.
func (s *Store) promote(ctx context.Context, id int64) (bool, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, classify(err)
	}
	defer tx.Rollback()
	var state string
	var pending int64
	if err := tx.QueryRowContext(ctx, "SELECT state, (SELECT count(*) FROM vector_outbox WHERE set_id = ?1) FROM vector_sets WHERE id = ?1", id).Scan(&state, &pending); err != nil {
		return false, classify(err)
	}
	if state != engine.SetBuilding || pending > 0 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, "UPDATE vector_sets SET state = 'retired' WHERE state = 'active'"); err != nil {
		return false, classify(err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE vector_sets SET state = 'active', activated_at = ? WHERE id = ?", s.opts.Now().UnixMilli(), id); err != nil {
		return false, classify(err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM vector_outbox WHERE set_id IN (SELECT id FROM vector_sets WHERE state = 'retired')"); err != nil {
		return false, classify(err)
	}
	if err := tx.Commit(); err != nil {
		return false, classify(err)
	}
	s.opts.Logger.Info("vector set is now active", "id", id)
	return true, nil
}
