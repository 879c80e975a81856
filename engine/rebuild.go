package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/cairn-dev/cairn/vecstore/chroma"
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

const maxListedIDs = 20

// Consistency compares the messages in SQLite with the FTS5 index (counts,
// ids, FTS5 integrity-check) and with every live vector set (counts, ids,
// model id and dimension recorded by the collection). Vectors still queued
// in the outbox are not differences.
func (e *Engine) Consistency(ctx context.Context) (CheckReport, error) {
	if e.bs != nil {
		return e.backendConsistency(ctx)
	}
	done, err := e.enter()
	if err != nil {
		return CheckReport{}, err
	}
	defer done()
	rep, err := e.consistency(ctx)
	if err != nil {
		return rep, err
	}
	return rep, e.checkPartsLocked(ctx, &rep)
}

func (e *Engine) consistency(ctx context.Context) (CheckReport, error) {
	var rep CheckReport
	rep.Problems = []string{}
	rep.Sets = []SetCheck{}
	rep.Warnings = modeWarnings(e.dir)
	if e.vec != nil && e.vec.emb != nil {
		rep.Embedder = e.vec.emb.ModelID()
	}
	msgs, err := e.idSet(ctx, "SELECT id FROM messages")
	if err != nil {
		return rep, err
	}
	rep.Messages = int64(len(msgs))
	ftsIDs, err := e.idSet(ctx, "SELECT id FROM messages_fts_docsize")
	if err != nil {
		return rep, err
	}
	rep.FTSRows = int64(len(ftsIDs))
	rep.FTSMissing, rep.FTSMissingIDs = diff(msgs, ftsIDs, nil)
	rep.FTSExtra, rep.FTSExtraIDs = diff(ftsIDs, msgs, nil)
	if rep.FTSMissing > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("fts: %d messages are not in the keyword index (e.g. %v)", rep.FTSMissing, rep.FTSMissingIDs))
	}
	if rep.FTSExtra > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("fts: %d index rows belong to no message (e.g. %v)", rep.FTSExtra, rep.FTSExtraIDs))
	}
	rep.FTSIntegrity = "ok"
	if err := e.ftsIntegrity(ctx); err != nil {
		rep.FTSIntegrity = err.Error()
		rep.Problems = append(rep.Problems, err.Error())
	}

	sets, err := e.liveSets(ctx, e.r)
	if err != nil {
		return rep, err
	}
	for _, s := range sets {
		sc := SetCheck{VectorSet: s}
		ups, err := e.idSet(ctx, "SELECT message_id FROM vector_outbox WHERE op = 0 AND set_id = ?", s.ID)
		if err != nil {
			return rep, err
		}
		dels, err := e.idSet(ctx, "SELECT message_id FROM vector_outbox WHERE op = 1 AND set_id = ?", s.ID)
		if err != nil {
			return rep, err
		}
		sc.PendingUpserts, sc.PendingDeletes = int64(len(ups)), int64(len(dels))
		sc.Pending = sc.PendingUpserts + sc.PendingDeletes
		vecIDs := map[int64]bool{}
		if e.vec == nil || e.vec.store == nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("vector set %d: the vector store is not open", s.ID))
		} else {
			c, err := e.vec.store.GetCollection(ctx, chroma.DefaultTenant, VectorDatabase, s.Collection)
			switch {
			case errors.Is(err, chroma.ErrNotFound):
			case err != nil:
				return rep, fmt.Errorf("engine: check vectors: %w", err)
			default:
				sc.CollectionModel, sc.CollectionDim = c.Model, c.Dimension
				if c.Model != s.ModelID {
					rep.Problems = append(rep.Problems, fmt.Sprintf("vector set %d: collection %s records model %q, the set %q", s.ID, s.Collection, c.Model, s.ModelID))
				}
				if c.Dimension != 0 && c.Dimension != s.Dim {
					rep.Problems = append(rep.Problems, fmt.Sprintf("vector set %d: collection %s has dimension %d, the set %d", s.ID, s.Collection, c.Dimension, s.Dim))
				}
				got, err := e.vec.store.Get(ctx, c.ID, chroma.GetRequest{Include: []chroma.Include{}})
				if err != nil {
					return rep, fmt.Errorf("engine: check vectors: %w", err)
				}
				for _, sid := range got.IDs {
					id, err := strconv.ParseInt(sid, 10, 64)
					if err != nil {
						rep.Problems = append(rep.Problems, fmt.Sprintf("vector set %d: record id %q is not a message id", s.ID, sid))
						continue
					}
					vecIDs[id] = true
				}
			}
		}
		sc.Vectors = int64(len(vecIDs))
		sc.Missing, sc.MissingIDs = diff(msgs, vecIDs, ups)
		sc.Extra, sc.ExtraIDs = diff(vecIDs, msgs, dels)
		if sc.Missing > 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("vector set %d (%s): %d messages have no vector and none queued (e.g. %v)", s.ID, s.ModelID, sc.Missing, sc.MissingIDs))
		}
		if sc.Extra > 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("vector set %d (%s): %d vectors belong to no message and no delete is queued (e.g. %v)", s.ID, s.ModelID, sc.Extra, sc.ExtraIDs))
		}
		rep.Sets = append(rep.Sets, sc)
	}
	return rep, nil
}

// diff counts the ids of a that are neither in b nor in except, listing
// the smallest maxListedIDs of them.
func diff(a, b, except map[int64]bool) (int64, []int64) {
	var n int64
	var list []int64
	for id := range a {
		if b[id] || except[id] {
			continue
		}
		n++
		list = append(list, id)
	}
	slices.Sort(list)
	if len(list) > maxListedIDs {
		list = list[:maxListedIDs]
	}
	return n, list
}

func (e *Engine) idSet(ctx context.Context, q string, args ...any) (map[int64]bool, error) {
	rows, err := e.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("engine: check: %w", classify(err))
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("engine: check: %w", classify(err))
		}
		out[id] = true
	}
	return out, classify(rows.Err())
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

// rebuildTarget is the vector set Rebuild fills: the active set of the
// embedder's model while it still has messages queued (a store that had
// messages before its first model: embedding it again into a second set
// would embed every message twice), else a building set of the model
// (resumed when one exists). resumed reports one of the first two cases.
func (e *Engine) rebuildTarget(ctx context.Context) (VectorSet, bool, error) {
	emb := e.vec.emb
	sets, err := e.liveSets(ctx, e.w)
	if err != nil {
		return VectorSet{}, false, err
	}
	for _, s := range sets {
		if s.ModelID != emb.ModelID() {
			continue
		}
		if s.State == SetBuilding {
			return s, true, nil
		}
		n, err := e.queued(ctx, s.ID)
		if err != nil {
			return VectorSet{}, false, err
		}
		if n > 0 {
			return s, true, nil
		}
	}
	s, err := e.createSet(ctx, emb.ModelID(), emb.Dim(), false)
	return s, false, err
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
	if e.bs != nil {
		return e.backendRebuild(ctx, opts)
	}
	var rep RebuildReport
	done, err := e.enter()
	if err != nil {
		return rep, err
	}
	defer done()
	if !opts.SkipFTS {
		if opts.Progress != nil {
			opts.Progress(Progress{Done: 0, Total: 1, Item: "keyword index"})
		}
		tx, err := e.w.BeginTx(ctx, nil)
		if err != nil {
			return rep, fmt.Errorf("engine: rebuild: %w", classify(err))
		}
		if err := e.fts.Rebuild(ctx, tx); err != nil {
			tx.Rollback()
			return rep, fmt.Errorf("engine: rebuild: %w", classify(err))
		}
		if err := tx.Commit(); err != nil {
			return rep, fmt.Errorf("engine: rebuild: %w", classify(err))
		}
		rep.FTSRebuilt = true
		if opts.Progress != nil {
			opts.Progress(Progress{Done: 1, Total: 1, Item: "keyword index"})
		}
	}
	if opts.SkipVectors || e.vec == nil || e.vec.emb == nil {
		return rep, nil
	}
	set, resumed, err := e.rebuildTarget(ctx)
	if err != nil {
		return rep, err
	}
	rep.Resumed = resumed
	if err := e.syncVectors(ctx, func(p Progress) {
		rep.Embedded = p.Done
		if opts.Progress != nil {
			opts.Progress(p)
		}
	}); err != nil {
		return rep, err
	}
	e.dropRetired(ctx) // the switch may have been made by the background worker
	rep.Set, err = e.getSet(ctx, set.ID)
	if err != nil {
		return rep, err
	}
	if rep.Set.State != SetActive {
		return rep, fmt.Errorf("engine: rebuild: vector set %d is still %s (another process holds part of its work; run rebuild again)", set.ID, rep.Set.State)
	}
	return rep, nil
}
