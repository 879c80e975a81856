package ops

import (
	"context"

	"github.com/cairn-dev/cairn/engine"
)

// VectorSets lists the vector sets with their pending outbox rows
// (Store.AllSets).
func VectorSets(ctx context.Context, eng *engine.Engine) ([]engine.VectorSet, error) {
	var sets []engine.VectorSet
	err := eng.Use(func(s engine.Store) error {
		var err error
		sets, err = s.AllSets(ctx)
		return err
	})
	return sets, err
}

// SyncVectors embeds every message still waiting for a vector in the sets
// this process can fill, in the caller's goroutine (the engine's
// background worker may help), and promotes a completed building set
// (Store.SyncVectors). progress, if not nil, is called after each batch
// (on a data dir with the outbox rows done and the total pending at the
// start). It returns when nothing this process can do is left.
func SyncVectors(ctx context.Context, eng *engine.Engine, progress func(engine.Progress)) error {
	return eng.Use(func(s engine.Store) error { return s.SyncVectors(ctx, progress) })
}
