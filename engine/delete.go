package engine

import (
	"context"
	"fmt"
)

// DeleteMessage removes one message from SQLite, the keyword index and (via
// the vector outbox, in the same transaction) its vectors. It returns
// ErrNotFound for an unknown id. The freed space is reclaimed by the next
// GC; use GC to make sure a deleted text is in no file of the data dir.
func (e *Engine) DeleteMessage(ctx context.Context, id int64) error {
	if id <= 0 {
		return invalid("id", "must be a positive integer, got %d", id)
	}
	done, err := e.enter()
	if err != nil {
		return err
	}
	defer done()
	tx, err := e.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("engine: delete message: %w", classify(err))
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM messages WHERE id = ?", id).Scan(&n); err != nil {
		return fmt.Errorf("engine: delete message: %w", classify(err))
	}
	if n == 0 {
		return fmt.Errorf("message id %d: %w", id, ErrNotFound)
	}
	if err := e.deleteMessagesTx(ctx, tx, []int64{id}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("engine: delete message: %w", classify(err))
	}
	e.wakeVectors()
	return nil
}
