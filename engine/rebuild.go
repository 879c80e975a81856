package engine

import (
	"context"
)

// SetCheck is the comparison of one vector set with SQLite.
type SetCheck struct {
	VectorSet
	// CollectionModel and CollectionDim are what the vecstore collection
	// records ("" and 0 when it does not exist yet).
	CollectionModel string `json:"collection_model"`
	CollectionDim   int    `json:"collection_dim"`
	Vectors         int64  `json:"vectors"`
	PendingUpserts  int64  `json:"pending_upserts"`
	PendingDeletes  int64  `json:"pending_deletes"`
	// Missing: messages with neither a vector nor an outbox row (drift).
	Missing    int64   `json:"missing"`
	MissingIDs []int64 `json:"missing_ids,omitempty"` // the first 20
	// Extra: vectors of no message, with no delete queued (drift).
	Extra    int64   `json:"extra"`
	ExtraIDs []int64 `json:"extra_ids,omitempty"` // the first 20
}

// CheckReport compares SQLite, the FTS5 index and the vector sets.
type CheckReport struct {
	Messages int64 `json:"messages"`
	// FTSRows is the number of documents in the FTS5 index.
	FTSRows int64 `json:"fts_rows"`
	// FTSMissing / FTSExtra: messages not indexed, index rows of no message.
	FTSMissing    int64   `json:"fts_missing"`
	FTSMissingIDs []int64 `json:"fts_missing_ids,omitempty"`
	FTSExtra      int64   `json:"fts_extra"`
	FTSExtraIDs   []int64 `json:"fts_extra_ids,omitempty"`
	// FTSIntegrity is "ok" or FTS5's integrity-check error.
	FTSIntegrity string     `json:"fts_integrity"`
	Sets         []SetCheck `json:"vector_sets"`
	// Parts counts what the store holds besides messages (sessions, read
	// cursors, breadcrumb marks): cairn migrate compares them across
	// stores.
	Parts *PartCounts `json:"parts,omitempty"`
	// Embedder is this process's embedding model ("" for none).
	Embedder string `json:"embedder,omitempty"`
	// Problems lists every difference in words; empty when consistent.
	Problems []string `json:"problems"`
	// Warnings are not differences: files of the data dir other local
	// users can read (a dir made before cairn created data dirs 0700, or
	// widened by hand). cairn never changes a mode it did not set.
	Warnings []string `json:"warnings,omitempty"`
}

// OK reports whether nothing differs.
func (r CheckReport) OK() bool { return len(r.Problems) == 0 }

// Consistency compares the messages in SQLite with the FTS5 index (counts,
// ids, FTS5 integrity-check) and with every live vector set (counts, ids,
// model id and dimension recorded by the collection). Vectors still queued
// in the outbox are not differences.
func (e *Engine) Consistency(ctx context.Context) (CheckReport, error) {
	done, err := e.enterStore()
	if err != nil {
		return CheckReport{}, err
	}
	defer done()
	return e.consistencyLocked(ctx)
}

// consistencyLocked is Consistency under e's guard.
func (e *Engine) consistencyLocked(ctx context.Context) (CheckReport, error) {
	rep, err := e.store.Consistency(ctx)
	if err != nil {
		return rep, err
	}
	if rep.Problems == nil {
		rep.Problems = []string{}
	}
	if rep.Sets == nil {
		rep.Sets = []SetCheck{}
	}
	if emb := e.opts.Embedder; emb != nil {
		rep.Embedder = emb.ModelID()
	}
	return rep, e.checkPartsLocked(ctx, &rep)
}

// RebuildOptions select what Rebuild regenerates.
type RebuildOptions struct {
	// SkipFTS keeps the keyword index as it is.
	SkipFTS bool
	// SkipVectors keeps the vectors as they are.
	SkipVectors bool
	// Progress, when set, is called as the work advances (Item names the
	// stage: "keyword index" or "embedding").
	Progress func(Progress)
}

// RebuildReport says what Rebuild did.
type RebuildReport struct {
	FTSRebuilt bool `json:"fts_rebuilt"`
	// Set is the vector set built (now active); zero when vectors were
	// skipped.
	Set VectorSet `json:"vector_set,omitzero"`
	// Resumed is true when an interrupted rebuild, or the filling of the
	// active set (messages stored before its model was first used), was
	// continued rather than a new set built.
	Resumed bool `json:"resumed"`
	// Embedded is the number of outbox rows processed by this call: each
	// message embedded once, and each vector deleted.
	Embedded int64 `json:"embedded"`
}

// Rebuild regenerates the keyword index and the vectors from the messages
// in SQLite. The keyword index is rebuilt in one transaction. The vectors
// are re-embedded with the engine's embedder into a new vector set (a new
// vecstore collection) while the active set keeps answering queries; when
// every message is embedded the new set becomes active and the old one is
// dropped. This is also how the embedding model is switched: open the
// engine with the new model and rebuild. An interrupted rebuild resumes
// where it stopped (the new set and its outbox rows are durable). When the
// active set is of the embedder's model and still has messages queued
// (messages stored before the model was first used), Rebuild fills it
// instead of building a second set: each message is embedded once. Without
// an embedder, vectors are skipped.
func (e *Engine) Rebuild(ctx context.Context, opts RebuildOptions) (RebuildReport, error) {
	var rep RebuildReport
	done, err := e.enterStore()
	if err != nil {
		return rep, err
	}
	defer done()
	if !opts.SkipFTS {
		if opts.Progress != nil {
			opts.Progress(Progress{Done: 0, Total: 1, Item: "keyword index"})
		}
		if err := e.store.RebuildKeywords(ctx); err != nil {
			return rep, err
		}
		rep.FTSRebuilt = true
		if opts.Progress != nil {
			opts.Progress(Progress{Done: 1, Total: 1, Item: "keyword index"})
		}
	}
	if opts.SkipVectors || e.opts.Embedder == nil {
		return rep, nil
	}
	set, resumed, err := e.store.RebuildTarget(ctx)
	if err != nil {
		return rep, err
	}
	rep.Resumed = resumed
	if err := e.store.SyncVectors(ctx, func(p Progress) {
		rep.Embedded = p.Done
		if opts.Progress != nil {
			opts.Progress(p)
		}
	}); err != nil {
		return rep, err
	}
	rep.Set, err = e.store.FinishRebuild(ctx, set)
	return rep, err
}
