package engine

import (
	"context"
	"fmt"
)

// backendImportSessions runs one file's import (run) in one transaction of
// the Store, its chunk messages written in it.
func (e *Engine) backendImportSessions(ctx context.Context, run func(SessionTx, func(context.Context, prepared) (WriteResult, error)) error) error {
	created := false
	_, err := onStore(e, func(ss Store) (struct{}, error) {
		return struct{}{}, ss.ImportSessions(ctx, func(tx SessionTx, write func(context.Context, StoredMessage) (WriteResult, error)) error {
			created = false
			return run(tx, func(ctx context.Context, p prepared) (WriteResult, error) {
				r, err := write(ctx, p.stored(e.opts.Now()))
				r.Redactions = p.redactions
				created = created || r.Created
				return r, err
			})
		})
	})
	if err == nil && created {
		e.wakeVectors()
	}
	return err
}

// backendSessions is Sessions.Get ("" for List) on a Store.
func (e *Engine) backendSessions(ctx context.Context, id string) ([]Session, error) {
	return onStore(e, func(ss Store) ([]Session, error) {
		out, err := ss.Sessions(ctx, id)
		if out == nil {
			out = []Session{}
		}
		return out, err
	})
}

// backendSessionRecords is Sessions.Messages on a Store.
func (e *Engine) backendSessionRecords(ctx context.Context, id string) ([]SessionRecord, error) {
	return onStore(e, func(ss Store) ([]SessionRecord, error) {
		recs, ok, err := ss.SessionRecords(ctx, id)
		if err == nil && !ok {
			err = fmt.Errorf("session %s: %w", id, ErrNotFound)
		}
		return recs, err
	})
}

// backendSessionRefs is Sessions.Refs on a Store.
func (e *Engine) backendSessionRefs(ctx context.Context, messageID int64) ([]SessionRef, error) {
	return onStore(e, func(ss Store) ([]SessionRef, error) {
		out, err := ss.SessionRefs(ctx, messageID)
		if out == nil {
			out = []SessionRef{}
		}
		return out, err
	})
}
