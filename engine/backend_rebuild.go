package engine

import (
	"context"
	"fmt"
)

// backendRebuild is Rebuild on a Store: the keyword entries recomputed
// in one transaction; the vectors embedded into a set of this process's
// model (the set of its model when messages are still queued for it,
// else a building set, resumed if one exists), which replaces the other
// sets once complete. This switches the model of a shared store: every
// process then has to run with the new model to search by meaning.
func (e *Engine) backendRebuild(ctx context.Context, opts RebuildOptions) (RebuildReport, error) {
	var rep RebuildReport
	rs, err := backendOp[RebuildStore](e)
	if err != nil {
		return rep, err
	}
	target, err := e.backendRebuildStart(ctx, rs, opts, &rep)
	if err != nil || target.ID == 0 {
		return rep, err
	}
	if err := e.backendSyncVectors(ctx, func(p Progress) {
		rep.Embedded = p.Done
		if opts.Progress != nil {
			opts.Progress(p)
		}
	}); err != nil {
		return rep, err
	}
	done, err := e.enterStore()
	if err != nil {
		return rep, err
	}
	defer done()
	if target.State == SetBuilding {
		ok, err := rs.ActivateSet(ctx, target.ID, e.opts.Now())
		if err != nil {
			return rep, err
		}
		if !ok {
			return rep, fmt.Errorf("engine: rebuild: vector set %d still has messages queued (another process holds part of its work; run rebuild again)", target.ID)
		}
	}
	sets, err := e.store.Sets(ctx)
	if err != nil {
		return rep, err
	}
	for _, s := range sets {
		if s.ID == target.ID {
			rep.Set = s
		}
	}
	e.bs.set = rep.Set
	return rep, nil
}

// backendRebuildStart rebuilds the keyword entries and chooses (or
// creates) the vector set to fill; ID 0 when vectors are skipped.
func (e *Engine) backendRebuildStart(ctx context.Context, rs RebuildStore, opts RebuildOptions, rep *RebuildReport) (VectorSet, error) {
	done, err := e.enterStore()
	if err != nil {
		return VectorSet{}, err
	}
	defer done()
	if !opts.SkipFTS {
		if opts.Progress != nil {
			opts.Progress(Progress{Done: 0, Total: 1, Item: "keyword index"})
		}
		if err := rs.RebuildKeywords(ctx); err != nil {
			return VectorSet{}, err
		}
		rep.FTSRebuilt = true
		if opts.Progress != nil {
			opts.Progress(Progress{Done: 1, Total: 1, Item: "keyword index"})
		}
	}
	emb := e.opts.Embedder
	if opts.SkipVectors || emb == nil {
		return VectorSet{}, nil
	}
	sets, err := e.store.Sets(ctx)
	if err != nil {
		return VectorSet{}, err
	}
	var target VectorSet
	for _, s := range sets {
		if s.ModelID == emb.ModelID() && (s.State == SetBuilding || s.Pending > 0) {
			target, rep.Resumed = s, true
		}
	}
	if !rep.Resumed {
		if target, err = rs.BuildSet(ctx, emb.ModelID(), emb.Dim(), e.opts.Now()); err != nil {
			return VectorSet{}, err
		}
	}
	if target.Dim != emb.Dim() {
		return VectorSet{}, fmt.Errorf("%w: model %s: the store's vectors have %d dimensions, the embedder %d", ErrDimensionMismatch, target.ModelID, target.Dim, emb.Dim())
	}
	e.bs.set, e.bs.hasSet = target, true
	return target, nil
}
