package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/cairn-dev/cairn/vecstore"
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
	coll, err := v.e.collection(ctx, s, false)
	if errors.Is(err, vecstore.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	const batch = 1000
	for start := 0; start < len(ids); start += batch {
		part := ids[start:min(start+batch, len(ids))]
		strIDs := make([]string, len(part))
		for i, id := range part {
			strIDs[i] = strconv.FormatInt(id, 10)
		}
		got, err := v.e.vec.store.Get(ctx, coll, vecstore.GetRequest{IDs: strIDs, Include: []vecstore.Include{vecstore.IncludeEmbeddings}})
		if err != nil {
			return nil, fmt.Errorf("engine: gc: vectors: %w", err)
		}
		for i, sid := range got.IDs {
			id, err := strconv.ParseInt(sid, 10, 64)
			if err != nil || i >= len(got.Embeddings) {
				continue
			}
			out[id] = got.Embeddings[i]
		}
	}
	return out, nil
}
