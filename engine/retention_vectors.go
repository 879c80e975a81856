package engine

import (
	"context"
	"fmt"
	"maps"
)

// storedVectors reads message vectors for near-duplicate collapse: those
// of the embedder's vector set, or with no embedder (a one-shot `cairn gc`
// does not load the model: comparing stored vectors needs none) those of
// the active set. It is nil when there is no such set.
func (e *Engine) storedVectors() VectorLookup {
	if e.vec == nil || e.vec.store == nil {
		return nil
	}
	if _, ok, err := e.collapseSet(context.Background()); err != nil || !ok {
		return nil
	}
	return engineVectors{e}
}

// collapseSet is the vector set storedVectors reads.
func (e *Engine) collapseSet(ctx context.Context) (VectorSet, bool, error) {
	if e.vec.emb != nil {
		return e.servingSet(ctx)
	}
	sets, err := e.liveSets(ctx, e.r)
	if err != nil {
		return VectorSet{}, false, err
	}
	for _, s := range sets {
		if s.State == SetActive {
			return s, true, nil
		}
	}
	return VectorSet{}, false, nil
}

type engineVectors struct{ e *Engine }

// Vectors implements VectorLookup. The caller holds e.enter().
func (v engineVectors) Vectors(ctx context.Context, ids []int64) (map[int64][]float32, error) {
	out := map[int64][]float32{}
	s, ok, err := v.e.collapseSet(ctx)
	if err != nil || !ok || len(ids) == 0 {
		return out, err
	}
	const batch = 1000
	for start := 0; start < len(ids); start += batch {
		got, err := v.e.vectorsOf(ctx, s, ids[start:min(start+batch, len(ids))])
		if err != nil {
			return nil, fmt.Errorf("engine: gc: %w", err)
		}
		maps.Copy(out, got)
	}
	return out, nil
}
