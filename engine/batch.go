package engine

import (
	"context"
	"errors"
	"fmt"
)

// MaxBatch is the largest number of messages StoreMessages takes at once.
const MaxBatch = 10000

// BatchError reports which message of a batch was refused; nothing of the
// batch was written. Err is the message's error (an *InvalidError, or
// ErrNotFound for a missing plain channel).
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("message %d of the batch: %v", e.Index, e.Err) }

// Unwrap returns the message's error, so errors.Is/As see its class.
func (e *BatchError) Unwrap() error { return e.Err }

// StoreMessages stores up to MaxBatch messages in one transaction: all or
// nothing. Each message behaves as in StoreMessage (idempotent: an existing
// message, or an earlier copy in the same batch, comes back with Created
// false). The vector outbox rows are written in the same transaction; the
// embedding happens afterwards in batches (see SyncVectors). A refused
// message fails the whole batch with a *BatchError naming its index.
func (e *Engine) StoreMessages(ctx context.Context, in []NewMessage) ([]WriteResult, error) {
	if len(in) > MaxBatch {
		return nil, invalid("messages", "at most %d per batch, got %d", MaxBatch, len(in))
	}
	ps := make([]prepared, len(in))
	for i, m := range in {
		p, err := e.prepare(m)
		if err != nil {
			return nil, &BatchError{Index: i, Err: err}
		}
		ps[i] = p
	}
	done, err := e.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if len(ps) == 0 {
		return []WriteResult{}, nil
	}
	tx, err := e.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("engine: store messages: %w", classify(err))
	}
	defer tx.Rollback()
	out := make([]WriteResult, len(ps))
	created := false
	for i, p := range ps {
		res, err := e.writeTx(ctx, tx, p)
		if err != nil {
			var inv *InvalidError
			if errors.As(err, &inv) || errors.Is(err, ErrNotFound) {
				return nil, &BatchError{Index: i, Err: err}
			}
			return nil, err
		}
		out[i] = res
		created = created || res.Created
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("engine: store messages: %w", classify(err))
	}
	if created {
		e.wakeVectors()
	}
	return out, nil
}
