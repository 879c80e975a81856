package sqlite

import (
	"context"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/fts/ftssql"
)

// The embedded store's side of the vector lifecycle: its sets live in
// SQLite and its vectors in vecstore (vecstore.go, outbox.go), so
// its outbox also carries the deletions a worker applies to vecstore, a
// worker refreshes the metadata of vectors stored already instead of
// embedding them again, and a complete building set is
// promoted by whichever worker empties its outbox.

// OpenVectors opens DIR/vectors when an embedder is configured or vector
// sets exist, and registers the embedder's set if no set is active yet
// (openVectors); the Engine's worker has work while vecstore is open.
func (s *Store) OpenVectors(ctx context.Context, v engine.Vectorizer) (bool, error) {
	s.text = v.Text
	if err := s.openVectors(ctx); err != nil {
		return false, err
	}
	return s.vec.store != nil, nil
}

// PrepareVectors converts the message collections written in an older
// vector code (ConvertVectors).
func (s *Store) PrepareVectors(ctx context.Context) error {
	if err := s.ConvertVectors(ctx, nil); err != nil {
		return fmt.Errorf("converting message vectors: %w", err)
	}
	return nil
}

// FillVectors processes one batch of outbox rows (drainOnce).
func (s *Store) FillVectors(ctx context.Context, n int) (int, error) {
	k, err := s.drainOnce(ctx, n)
	if err != nil {
		return k, err
	}
	// A long drain (compactAfterRows) ends with a compaction once the
	// outbox is empty; the worker is this method's only caller.
	if v := s.vec; v != nil && v.store != nil {
		v.drained += k
		if k == 0 {
			if v.drained >= compactAfterRows {
				s.compactVectors(ctx)
			}
			v.drained = 0
		}
	}
	return k, nil
}

// SyncVectors drains the outbox rows this process can do (syncVectors).
func (s *Store) SyncVectors(ctx context.Context, progress func(engine.Progress)) error {
	return s.syncVectors(ctx, progress)
}

// RebuildKeywords rebuilds the FTS5 index in one transaction (the
// in-memory BM25 index follows the table).
func (s *Store) RebuildKeywords(ctx context.Context) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("engine: rebuild: %w", classify(err))
	}
	if err := s.fts.Rebuild(ctx, ftssql.Of(tx)); err != nil {
		tx.Rollback()
		return fmt.Errorf("engine: rebuild: %w", classify(err))
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("engine: rebuild: %w", classify(err))
	}
	return nil
}

// RebuildTarget returns the vector set Rebuild fills: the active set of the
// embedder's model while it still has messages queued (a store that had
// messages before its first model: embedding it again into a second set
// would embed every message twice), else a building set of the model
// (resumed when one exists). resumed reports one of the first two cases.
func (s *Store) RebuildTarget(ctx context.Context) (engine.VectorSet, bool, error) {
	emb := s.vec.emb
	sets, err := s.liveSets(ctx, s.w)
	if err != nil {
		return engine.VectorSet{}, false, err
	}
	for _, set := range sets {
		if set.ModelID != emb.ModelID() {
			continue
		}
		if set.State == engine.SetBuilding {
			return set, true, nil
		}
		n, err := s.queued(ctx, set.ID)
		if err != nil {
			return engine.VectorSet{}, false, err
		}
		if n > 0 {
			return set, true, nil
		}
	}
	set, err := s.createSet(ctx, emb.ModelID(), emb.Dim(), false)
	return set, false, err
}

// FinishRebuild drops what retired sets left (the switch may have been
// made by the background worker) and returns the target, which must be
// active by now.
func (s *Store) FinishRebuild(ctx context.Context, target engine.VectorSet) (engine.VectorSet, error) {
	s.dropRetired(ctx)
	set, err := s.getSet(ctx, target.ID)
	if err != nil {
		return set, err
	}
	if set.State != engine.SetActive {
		return set, fmt.Errorf("engine: rebuild: vector set %d is still %s (another process holds part of its work; run rebuild again)", target.ID, set.State)
	}
	return set, nil
}
