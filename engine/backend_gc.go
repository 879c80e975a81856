package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// backendGC is Retention.GC on a Store: the same policies and plan over
// the Store's retention facts and sessions, one delete transaction, then
// the store's own reclaim. A size quota (gc.max_bytes) plans as on a data
// dir; after it deleted something the store is compacted, so that its
// size drops.
func (e *Engine) backendGC(ctx context.Context, opts GCOptions) (*GCReport, error) {
	rs := e.store
	done, err := e.enterStore()
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
	quota := e.store
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
	var sessionIDs, orphans []string
	var quotaPlanned bool
	if opts.SessionMaxAge > 0 || len(opts.ExcludeSessions) > 0 || opts.MaxBytes > 0 {
		overQuota := func() error {
			before := len(rep.Messages) + len(rep.Sessions)
			err := backendOverQuota(ctx, quota, opts.MaxBytes, rep, e.storeName())
			quotaPlanned = len(rep.Messages)+len(rep.Sessions) > before
			return err
		}
		if sessionIDs, orphans, err = e.backendPlanSessions(ctx, opts, rep, overQuota); err != nil {
			return nil, err
		}
	}
	progress(2, "plan sessions")
	if opts.DryRun {
		rep.BytesAfter = rep.BytesBefore
		progress(3, "done")
		return rep, nil
	}
	ids := make([]int64, len(rep.Messages))
	for i, it := range rep.Messages {
		ids[i] = it.ID
	}
	if len(sessionIDs) > 0 {
		if err := e.store.DeleteSessions(ctx, sessionIDs, orphans, ids); err != nil {
			return nil, err
		}
	} else if len(ids) > 0 {
		if err := rs.DeleteMessages(ctx, ids, ""); err != nil {
			return nil, err
		}
	}
	switch {
	case opts.NoVacuum:
	case quotaPlanned:
		if err := quota.Compact(ctx); err != nil {
			return rep, err
		}
	default:
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

// backendPlanSessions adds to rep the sessions that match an exclusion
// glob (by id), then what overQuota plans, then the sessions whose last
// record is older than opts.SessionMaxAge (oldest first), as GC does on a
// data dir, with the chunk messages only they use; it returns the
// sessions' ids and the contents only they hold.
func (e *Engine) backendPlanSessions(ctx context.Context, opts GCOptions, rep *GCReport, overQuota func() error) (sessionIDs, orphans []string, _ error) {
	ss := e.store
	all, err := ss.Sessions(ctx, "")
	if err != nil {
		return nil, nil, err
	}
	planned := map[string]bool{}
	if len(opts.ExcludeSessions) > 0 {
		byID := slices.Clone(all)
		slices.SortFunc(byID, func(a, b Session) int { return strings.Compare(a.ID, b.ID) })
		for _, s := range byID {
			if g := matchGlob(opts.ExcludeSessions, s.ID, s.Project, s.Project+"/"+s.ID+".jsonl"); g != "" {
				rep.Sessions = append(rep.Sessions, GCSession{ID: s.ID, LastAt: s.LastAt, Reason: fmt.Sprintf("matches import.exclude %q", g)})
				planned[s.ID] = true
			}
		}
	}
	if err := overQuota(); err != nil {
		return nil, nil, err
	}
	for _, s := range rep.Sessions {
		planned[s.ID] = true
	}
	if opts.SessionMaxAge > 0 {
		cutoff := e.opts.Now().Add(-opts.SessionMaxAge).UnixMilli()
		old := slices.DeleteFunc(slices.Clone(all), func(s Session) bool {
			last := s.LastAt.UnixMilli()
			return planned[s.ID] || last <= 0 || last >= cutoff
		})
		slices.SortStableFunc(old, func(a, b Session) int { return a.LastAt.Compare(b.LastAt) })
		for _, s := range old {
			rep.Sessions = append(rep.Sessions, GCSession{ID: s.ID, LastAt: s.LastAt, Reason: fmt.Sprintf("last record older than %s", opts.SessionMaxAge)})
		}
	}
	for _, s := range rep.Sessions {
		sessionIDs = append(sessionIDs, s.ID)
	}
	orphans, chunkMsgs, err := ss.SessionOrphans(ctx, sessionIDs)
	if err != nil {
		return nil, nil, err
	}
	rep.ContentsDeleted = len(orphans)
	inPlan := map[int64]bool{}
	for _, m := range rep.Messages {
		inPlan[m.ID] = true
	}
	if len(chunkMsgs) > 0 {
		ms, err := e.store.Messages(ctx, chunkMsgs)
		if err != nil {
			return nil, nil, err
		}
		for _, m := range InOrder(chunkMsgs, ms) {
			if !inPlan[m.ID] {
				rep.Messages = append(rep.Messages, GCItem{ID: m.ID, ChannelID: m.ChannelID, MessageType: m.MessageType, Confidence: m.Confidence,
					CreatedAt: m.CreatedAt, Policy: "sessions", Reason: "chunk of deleted sessions only"})
			}
		}
	}
	return sessionIDs, orphans, nil
}

// backendCollapseVectors is the VectorLookup of near-duplicate collapse:
// the vectors of the embedder's set (servingSet), or with no embedder (a
// one-shot `cairn gc` does not load the model: comparing stored vectors
// needs none) those of the active set; nil when there is no such set.
func (e *Engine) backendCollapseVectors(ctx context.Context, rs Store) (VectorLookup, error) {
	if e.opts.Embedder != nil {
		s, ok, err := e.servingSet(ctx)
		if err != nil || !ok {
			return nil, err
		}
		return backendVectors{rs, s.ID}, nil
	}
	sets, err := e.store.Sets(ctx)
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
	rs  Store
	set int64
}

func (v backendVectors) Vectors(ctx context.Context, ids []int64) (map[int64][]float32, error) {
	return v.rs.Vectors(ctx, v.set, ids)
}

// backendPurge is Retention.Purge on a Store: a channel's, an agent's
// or a session's messages (a session's with the contents only it holds).
func (e *Engine) backendPurge(ctx context.Context, opts PurgeOptions) (*PurgeReport, error) {
	rs := e.store
	done, err := e.enterStore()
	if err != nil {
		return nil, err
	}
	defer done()
	rep := &PurgeReport{DryRun: opts.DryRun}
	if rep.BytesBefore, err = rs.Size(ctx); err != nil {
		return nil, err
	}
	var del func() error
	if opts.Session != "" {
		del, err = e.planPurgeSession(ctx, opts.Session, rep)
	} else {
		del, err = planPurgeMessages(ctx, rs, opts, rep)
	}
	if err != nil {
		return nil, err
	}
	if opts.DryRun {
		rep.BytesAfter = rep.BytesBefore
		return rep, nil
	}
	if err := del(); err != nil {
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

// planPurgeMessages fills rep with a channel's or an agent's messages and
// returns their deletion.
func planPurgeMessages(ctx context.Context, rs Store, opts PurgeOptions, rep *PurgeReport) (func() error, error) {
	ids, found, err := rs.MessageIDsOf(ctx, opts.Channel, opts.Agent)
	switch {
	case err != nil:
		return nil, err
	case !found && opts.Channel != "":
		return nil, fmt.Errorf("channel %q: %w", opts.Channel, ErrNotFound)
	case !found:
		return nil, fmt.Errorf("agent %q: %w", opts.Agent, ErrNotFound)
	}
	if opts.Channel != "" {
		rep.Channels = []string{opts.Channel}
	}
	rep.Messages = len(ids)
	return func() error { return rs.DeleteMessages(ctx, ids, opts.Channel) }, nil
}

// planPurgeSession fills rep with a session, the contents only it holds
// and the chunk messages only those use, and returns their deletion.
func (e *Engine) planPurgeSession(ctx context.Context, session string, rep *PurgeReport) (func() error, error) {
	ss := e.store
	found, err := ss.Sessions(ctx, session)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("session %s: %w", session, ErrNotFound)
	}
	sessions := []string{session}
	orphans, ids, err := ss.SessionOrphans(ctx, sessions)
	if err != nil {
		return nil, err
	}
	rep.Messages, rep.Sessions, rep.ContentsDeleted = len(ids), sessions, len(orphans)
	return func() error {
		if err := ss.ForgetSessionFiles(ctx, sessions); err != nil {
			return err
		}
		return ss.DeleteSessions(ctx, sessions, orphans, ids)
	}, nil
}

// backendOverQuota is overQuota on a Store: the same plan over the
// store's sessions and candidate messages.
func backendOverQuota(ctx context.Context, qs Store, maxBytes int64, rep *GCReport, what string) error {
	q := newQuotaPlan(maxBytes, rep, what)
	if q == nil {
		return nil
	}
	ss, err := qs.QuotaSessions(ctx)
	if err != nil {
		return err
	}
	for _, s := range ss {
		if !q.session(s.ID, s.LastAt, s.Length) {
			return nil
		}
	}
	ms, err := qs.QuotaMessages(ctx)
	if err != nil {
		return err
	}
	for _, m := range ms {
		it := GCItem{ID: m.ID, ChannelID: m.Channel, MessageType: m.Type, Confidence: m.Confidence, CreatedAt: m.CreatedAt}
		if !q.message(it, m.Length) {
			return nil
		}
	}
	q.finish()
	return nil
}
