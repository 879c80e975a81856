package engine

import (
	"context"
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

func (e *BatchError) Error() string {
	return fmt.Sprintf("message %d of the batch: %v", e.Index, e.Err)
}

// Unwrap returns the message's error, so errors.Is/As see its class.
func (e *BatchError) Unwrap() error { return e.Err }

// StoreMessages stores up to MaxBatch messages in one transaction: all or
// nothing. Each message behaves as in StoreMessage (idempotent: an existing
// message, or an earlier copy in the same batch, comes back with Created
// false). The vector outbox rows are written in the same transaction; the
// embedding happens afterwards in batches (see ops.SyncVectors). A refused
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
	return e.writePrepared(ctx, ps)
}

// ValidateMessage checks m as StoreMessage would, without writing, and
// returns it as it would be stored: redacted, normalized, with its content
// hash (CreatedAt is now when m gives none). Bad input is an
// *InvalidError. Whether a plain channel exists is not checked (see
// GetChannel).
func (e *Engine) ValidateMessage(m NewMessage) (StoredMessage, error) {
	p, err := e.prepare(m)
	if err != nil {
		return StoredMessage{}, err
	}
	return p.stored(e.opts.Now()), nil
}
