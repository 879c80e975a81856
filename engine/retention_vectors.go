package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/cairn-dev/cairn/vecstore"
)

// storedVectors reads message vectors from the serving vector set, for
// near-duplicate collapse. It is nil when the engine has no vectors this
// process can read (no embedder, or only another model's vectors).
func (e *Engine) storedVectors() VectorLookup {
	if e.vec == nil || e.vec.store == nil || e.vec.emb == nil {
		return nil
	}
	return engineVectors{e}
}

type engineVectors struct{ e *Engine }

// Vectors implements VectorLookup. The caller holds e.enter().
func (v engineVectors) Vectors(ctx context.Context, ids []int64) (map[int64][]float32, error) {
	out := map[int64][]float32{}
	s, ok, err := v.e.servingSet(ctx)
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
