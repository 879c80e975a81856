package engine

import (
	"context"
	"fmt"
)

// DeleteMessage removes one message from SQLite, the keyword index and (via
// the vector outbox, in the same transaction) its vectors. It returns
// ErrNotFound for an unknown id. When it returns, the text is in no file of
// the data dir: SQLite zeroes the deleted row (secure_delete), FTS5 drops
// its entries (secure-delete) and the WAL is checkpointed and truncated
// (scrubDeleted). GC also reclaims the freed space.
func (e *Engine) DeleteMessage(ctx context.Context, id int64) error {
	if id <= 0 {
		return invalid("id", "must be a positive integer, got %d", id)
	}
	done, err := e.enterStore()
	if err != nil {
		return err
	}
	defer done()
	var channel []Message // its channel, for the continuous export
	if e.opts.Observer != nil {
		if channel, err = e.store.Messages(ctx, []int64{id}); err != nil {
			return err
		}
	}
	ok, err := e.store.Delete(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("message id %d: %w", id, ErrNotFound)
	}
	for _, m := range channel {
		e.committed(m.ChannelID)
	}
	return nil
}
