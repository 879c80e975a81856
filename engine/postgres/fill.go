package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cairn-dev/cairn/engine"
)

// The vector side of engine.Store on PostgreSQL: a message's vectors are
// rows of the set's table, written and deleted in the same database, so
// the outbox only holds messages to embed; this process fills the set of
// its model, and a rebuild switches sets in activateSet.

// fillBatch is how many queued messages one FillVectors claims and
// embeds.
const fillBatch = 256

// fillLease is how long claimed messages are this process's.
const fillLease = 60 * time.Second

// OpenVectors implements engine.Store: it creates the active set of v's
// model when the store has no live set, and fills the set of that model.
func (s *Store) OpenVectors(ctx context.Context, v engine.Vectorizer) (bool, error) {
	emb := v.Embedder
	s.fill.Lock()
	s.fill.v = v
	s.fill.Unlock()
	if emb == nil {
		return false, nil
	}
	sets, err := s.Sets(ctx)
	if err != nil {
		return false, err
	}
	var set engine.VectorSet
	found := false
	for _, x := range sets {
		if x.ModelID == emb.ModelID() {
			set, found = x, true
		}
	}
	if !found && len(sets) == 0 {
		if set, err = s.createSet(ctx, emb.ModelID(), emb.Dim(), v.Now()); err != nil {
			return false, err
		}
		found = true
	}
	if !found {
		return false, nil
	}
	if set.Dim != emb.Dim() {
		return false, fmt.Errorf("%w: model %s: the store's vectors have %d dimensions, the embedder %d", engine.ErrDimensionMismatch, set.ModelID, set.Dim, emb.Dim())
	}
	s.setFilled(set)
	return true, nil
}

func (s *Store) setFilled(set engine.VectorSet) {
	s.fill.Lock()
	s.fill.set, s.fill.hasSet = set, true
	s.fill.Unlock()
}

// filled returns what this process fills: the vectorizer and its set.
func (s *Store) filled() (engine.Vectorizer, engine.VectorSet, bool) {
	s.fill.Lock()
	defer s.fill.Unlock()
	return s.fill.v, s.fill.set, s.fill.hasSet
}

// PrepareVectors implements engine.Store: float vectors need no
// conversion.
func (s *Store) PrepareVectors(ctx context.Context) error { return nil }

// FillVectors implements engine.Store: it embeds up to n queued messages
// of this process's set and stores their vectors.
func (s *Store) FillVectors(ctx context.Context, n int) (int, error) {
	v, set, ok := s.filled()
	if !ok || v.Embedder == nil {
		return 0, nil
	}
	qs, err := s.claim(ctx, set.ID, n, fillLease)
	if err != nil || len(qs) == 0 {
		return 0, err
	}
	texts := make([]string, len(qs))
	ids := make([]int64, len(qs))
	for i, q := range qs {
		ids[i] = q.ID
		texts[i] = v.Text(q)
	}
	vecs, err := v.Embedder.Embed(ctx, texts)
	if err != nil {
		return 0, fmt.Errorf("postgres: embed: %w", err)
	}
	if len(vecs) != len(ids) {
		return 0, errors.New("postgres: embed: the model returned a wrong number of vectors")
	}
	if err := s.putVectors(ctx, set.ID, ids, vecs); err != nil {
		return 0, err
	}
	return len(ids), nil
}

// SyncVectors implements engine.Store: it embeds what is queued for this
// process's set until nothing is queued, waiting for the rows another
// process has leased (they come back to the queue if it dies). progress
// counts the messages this call embedded.
func (s *Store) SyncVectors(ctx context.Context, progress func(engine.Progress)) error {
	v, set, ok := s.filled()
	if !ok || v.Embedder == nil {
		return nil
	}
	var total int64
	for {
		n, err := s.FillVectors(ctx, fillBatch)
		if err != nil {
			return err
		}
		total += int64(n)
		if progress != nil {
			progress(engine.Progress{Done: total, Total: total, Item: "embedding"})
		}
		if n > 0 {
			continue
		}
		sets, err := s.Sets(ctx)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(sets, func(x engine.VectorSet) bool { return x.ID == set.ID && x.Pending > 0 }) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// RebuildTarget implements engine.Store: the set of this process's model
// while messages are still queued for it or it is building, else a new
// building set; this process fills it from then on.
func (s *Store) RebuildTarget(ctx context.Context) (engine.VectorSet, bool, error) {
	v, _, _ := s.filled()
	emb := v.Embedder
	sets, err := s.Sets(ctx)
	if err != nil {
		return engine.VectorSet{}, false, err
	}
	var target engine.VectorSet
	resumed := false
	for _, x := range sets {
		if x.ModelID == emb.ModelID() && (x.State == engine.SetBuilding || x.Pending > 0) {
			target, resumed = x, true
		}
	}
	if !resumed {
		if target, err = s.buildSet(ctx, emb.ModelID(), emb.Dim(), v.Now()); err != nil {
			return engine.VectorSet{}, false, err
		}
	}
	if target.Dim != emb.Dim() {
		return engine.VectorSet{}, false, fmt.Errorf("%w: model %s: the store's vectors have %d dimensions, the embedder %d", engine.ErrDimensionMismatch, target.ModelID, target.Dim, emb.Dim())
	}
	s.setFilled(target)
	return target, resumed, nil
}

// FinishRebuild implements engine.Store: a building target replaces the
// other sets (activateSet) once nothing is queued for it.
func (s *Store) FinishRebuild(ctx context.Context, target engine.VectorSet) (engine.VectorSet, error) {
	v, _, _ := s.filled()
	if target.State == engine.SetBuilding {
		ok, err := s.activateSet(ctx, target.ID, v.Now())
		if err != nil {
			return engine.VectorSet{}, err
		}
		if !ok {
			return engine.VectorSet{}, fmt.Errorf("postgres: rebuild: vector set %d still has messages queued (another process holds part of its work; run rebuild again)", target.ID)
		}
	}
	sets, err := s.Sets(ctx)
	if err != nil {
		return engine.VectorSet{}, err
	}
	var set engine.VectorSet
	for _, x := range sets {
		if x.ID == target.ID {
			set = x
		}
	}
	s.setFilled(set)
	return set, nil
}
