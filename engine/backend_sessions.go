package engine

import (
	"context"
	"fmt"
)

// backendImportSessions runs one file's import (run) in one transaction of
// the Backend, its chunk messages written in it.
func (e *Engine) backendImportSessions(ctx context.Context, run func(SessionTx, func(context.Context, prepared) (WriteResult, error)) error) error {
	ss, err := backendOp[SessionStore](e)
	if err != nil {
		return err
	}
	done, err := e.enterBackend()
	if err != nil {
		return err
	}
	defer done()
	created := false
	err = ss.ImportSessions(ctx, func(tx SessionTx, write func(context.Context, StoredMessage) (WriteResult, error)) error {
		created = false
		return run(tx, func(ctx context.Context, p prepared) (WriteResult, error) {
			r, err := write(ctx, p.stored(e.opts.Now()))
			r.Redactions = p.redactions
			created = created || r.Created
			return r, err
		})
	})
	if err == nil && created {
		e.wakeBackend()
	}
	return err
}

// backendSessions is Sessions.Get ("" for List) on a Backend.
func (e *Engine) backendSessions(ctx context.Context, id string) ([]Session, error) {
	ss, err := backendOp[SessionStore](e)
	if err != nil {
		return nil, err
	}
	done, err := e.enterBackend()
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := ss.Sessions(ctx, id)
	if out == nil {
		out = []Session{}
	}
	return out, err
}

// backendSessionRecords is Sessions.Messages on a Backend.
func (e *Engine) backendSessionRecords(ctx context.Context, id string) ([]SessionRecord, error) {
	ss, err := backendOp[SessionStore](e)
	if err != nil {
		return nil, err
	}
	done, err := e.enterBackend()
	if err != nil {
		return nil, err
	}
	defer done()
	recs, ok, err := ss.SessionRecords(ctx, id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	return recs, nil
}

// backendSessionRefs is Sessions.Refs on a Backend.
func (e *Engine) backendSessionRefs(ctx context.Context, messageID int64) ([]SessionRef, error) {
	ss, err := backendOp[SessionStore](e)
	if err != nil {
		return nil, err
	}
	done, err := e.enterBackend()
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := ss.SessionRefs(ctx, messageID)
	if out == nil {
		out = []SessionRef{}
	}
	return out, err
}
