package ops

import (
	"context"

	"github.com/cairn-dev/cairn/engine"
)

// Check verifies the store: its own checks of its files (Store.Integrity:
// on the data dir SQLite's quick_check, the foreign keys, the channel
// counters and FTS5's integrity check) and the consistency report
// (Consistency: the keyword index and every vector set against the
// messages). It returns an error wrapping engine.ErrCorrupt describing the
// problems found; a consistency report that cannot be read is one.
func Check(ctx context.Context, eng *engine.Engine) error {
	return eng.Use(func(s engine.Store) error { return engine.CheckStore(ctx, s) })
}

// Consistency compares the messages with the keyword index (counts, ids,
// FTS5 integrity-check on the data dir) and with every live vector set
// (counts, ids, model id and dimension recorded by the collection), and
// counts what the store holds besides messages (engine.PartCounts).
// Vectors still queued in the outbox are not differences.
func Consistency(ctx context.Context, eng *engine.Engine) (engine.CheckReport, error) {
	var rep engine.CheckReport
	err := eng.Use(func(s engine.Store) error {
		var err error
		rep, err = consistency(ctx, eng, s)
		return err
	})
	return rep, err
}

// consistency is Consistency on eng's store s.
func consistency(ctx context.Context, eng *engine.Engine, s engine.Store) (engine.CheckReport, error) {
	rep, err := engine.StoreConsistency(ctx, s)
	if err != nil {
		return rep, err
	}
	if emb := eng.Options().Embedder; emb != nil {
		rep.Embedder = emb.ModelID()
	}
	return rep, nil
}
