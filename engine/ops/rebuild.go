package ops

import (
	"context"

	"github.com/cairn-dev/cairn/engine"
)

// RebuildOptions select what Rebuild regenerates.
type RebuildOptions struct {
	// SkipFTS keeps the keyword index as it is.
	SkipFTS bool
	// SkipVectors keeps the vectors as they are.
	SkipVectors bool
	// Progress, when set, is called as the work advances (Item names the
	// stage: "keyword index" or "embedding").
	Progress func(engine.Progress)
}

// RebuildReport says what Rebuild did.
type RebuildReport struct {
	FTSRebuilt bool `json:"fts_rebuilt"`
	// Set is the vector set built (now active); zero when vectors were
	// skipped.
	Set engine.VectorSet `json:"vector_set,omitzero"`
	// Resumed is true when an interrupted rebuild, or the filling of the
	// active set (messages stored before its model was first used), was
	// continued rather than a new set built.
	Resumed bool `json:"resumed"`
	// Embedded is the number of outbox rows processed by this call: each
	// message embedded once, and each vector deleted.
	Embedded int64 `json:"embedded"`
}

// Rebuild regenerates the keyword index and the vectors from the messages
// in the store. The keyword index is rebuilt in one transaction. The
// vectors are re-embedded with the engine's embedder into a new vector set
// (a new vecstore collection) while the active set keeps answering
// queries; when every message is embedded the new set becomes active and
// the old one is dropped. This is also how the embedding model is
// switched: open the engine with the new model and rebuild. An
// interrupted rebuild resumes where it stopped (the new set and its outbox
// rows are durable). When the active set is of the embedder's model and
// still has messages queued (messages stored before the model was first
// used), Rebuild fills it instead of building a second set: each message
// is embedded once. Without an embedder, vectors are skipped.
func Rebuild(ctx context.Context, eng *engine.Engine, opts RebuildOptions) (RebuildReport, error) {
	var rep RebuildReport
	err := eng.Use(func(s engine.Store) error {
		if !opts.SkipFTS {
			if opts.Progress != nil {
				opts.Progress(engine.Progress{Done: 0, Total: 1, Item: "keyword index"})
			}
			if err := s.RebuildKeywords(ctx); err != nil {
				return err
			}
			rep.FTSRebuilt = true
			if opts.Progress != nil {
				opts.Progress(engine.Progress{Done: 1, Total: 1, Item: "keyword index"})
			}
		}
		if opts.SkipVectors || eng.Options().Embedder == nil {
			return nil
		}
		set, resumed, err := s.RebuildTarget(ctx)
		if err != nil {
			return err
		}
		rep.Resumed = resumed
		if err := s.SyncVectors(ctx, func(p engine.Progress) {
			rep.Embedded = p.Done
			if opts.Progress != nil {
				opts.Progress(p)
			}
		}); err != nil {
			return err
		}
		rep.Set, err = s.FinishRebuild(ctx, set)
		return err
	})
	return rep, err
}
