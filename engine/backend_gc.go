package engine

import (
	"context"
	"fmt"
)

// backendGC is Retention.GC on a Backend: the same policies and plan over
// the Backend's retention facts, one delete transaction, then the store's
// own reclaim. Sessions are not kept on a Backend; a size quota is
// PostgreSQL's to keep (both are said in the report's notes).
func (e *Engine) backendGC(ctx context.Context, opts GCOptions) (*GCReport, error) {
	rs, err := backendOp[RetentionStore](e)
	if err != nil {
		return nil, err
	}
	done, err := e.enterBackend()
	if err != nil {
		return nil, err
	}
	defer done()
	rep := &GCReport{DryRun: opts.DryRun, Messages: []GCItem{}, Sessions: []GCSession{}}
	if rep.BytesBefore, err = rs.Size(ctx); err != nil {
		return nil, err
	}
	progress := func(done int64, item string) {
		if opts.Progress != nil {
			opts.Progress(Progress{Done: done, Total: 3, Item: item})
		}
	}
	if opts.MaxBytes > 0 {
		rep.Notes = append(rep.Notes, "gc.max_bytes is not applied to a "+e.backend+" store: its size is the database's, kept with its own tools")
	}
	if len(opts.Policies) > 0 {
		if opts.Vectors == nil {
			if opts.Vectors, err = e.backendCollapseVectors(ctx, rs); err != nil {
				return nil, err
			}
		}
		rows, err := rs.RetentionRows(ctx)
		if err != nil {
			return nil, err
		}
		all := make([]gcRow, len(rows))
		for i, r := range rows {
			all[i] = gcRow{id: r.ID, channel: r.Channel, typ: r.Type, confidence: r.Confidence, created: r.CreatedAt.UnixMilli(), pinned: r.Pinned}
		}
		if err := planMessageRows(ctx, opts, e.opts.Now(), rep, all); err != nil {
			return nil, err
		}
	}
	progress(1, "plan messages")
	progress(2, "plan sessions")
	if opts.DryRun {
		rep.BytesAfter = rep.BytesBefore
		progress(3, "done")
		return rep, nil
	}
	if len(rep.Messages) > 0 {
		ids := make([]int64, len(rep.Messages))
		for i, it := range rep.Messages {
			ids[i] = it.ID
		}
		if err := rs.DeleteMessages(ctx, ids, ""); err != nil {
			return nil, err
		}
	}
	if !opts.NoVacuum {
		if err := rs.Reclaim(ctx); err != nil {
			return rep, err
		}
	}
	if rep.BytesAfter, err = rs.Size(ctx); err != nil {
		return rep, err
	}
	progress(3, "done")
	return rep, nil
}

// backendCollapseVectors is the VectorLookup of near-duplicate collapse on
// a Backend: the vectors of this process's model's set, else of the
// active set; nil when there is none.
func (e *Engine) backendCollapseVectors(ctx context.Context, rs RetentionStore) (VectorLookup, error) {
	if e.bs.hasSet {
		return backendVectors{rs, e.bs.set.ID}, nil
	}
	sets, err := e.bs.be.Sets(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range sets {
		if s.State == SetActive {
			return backendVectors{rs, s.ID}, nil
		}
	}
	return nil, nil
}

type backendVectors struct {
	rs  RetentionStore
	set int64
}

func (v backendVectors) Vectors(ctx context.Context, ids []int64) (map[int64][]float32, error) {
	return v.rs.Vectors(ctx, v.set, ids)
}

// backendPurge is Retention.Purge on a Backend: a channel's or an agent's
// messages (a session is never on a Backend: ErrNotFound).
func (e *Engine) backendPurge(ctx context.Context, opts PurgeOptions) (*PurgeReport, error) {
	rs, err := backendOp[RetentionStore](e)
	if err != nil {
		return nil, err
	}
	done, err := e.enterBackend()
	if err != nil {
		return nil, err
	}
	defer done()
	if opts.Session != "" {
		return nil, fmt.Errorf("session %s: %w (sessions are not kept on a %s store)", opts.Session, ErrNotFound, e.backend)
	}
	rep := &PurgeReport{DryRun: opts.DryRun}
	if rep.BytesBefore, err = rs.Size(ctx); err != nil {
		return nil, err
	}
	ids, found, err := rs.MessageIDsOf(ctx, opts.Channel, opts.Agent)
	if err != nil {
		return nil, err
	}
	switch {
	case !found && opts.Channel != "":
		return nil, fmt.Errorf("channel %q: %w", opts.Channel, ErrNotFound)
	case !found:
		return nil, fmt.Errorf("agent %q: %w", opts.Agent, ErrNotFound)
	}
	if opts.Channel != "" {
		rep.Channels = []string{opts.Channel}
	}
	rep.Messages = len(ids)
	if opts.DryRun {
		rep.BytesAfter = rep.BytesBefore
		return rep, nil
	}
	if err := rs.DeleteMessages(ctx, ids, opts.Channel); err != nil {
		return nil, err
	}
	if !opts.NoVacuum {
		if err := rs.Reclaim(ctx); err != nil {
			return rep, err
		}
	}
	if rep.BytesAfter, err = rs.Size(ctx); err != nil {
		return rep, err
	}
	return rep, nil
}
