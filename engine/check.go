package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
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

// CheckStore verifies s: its own checks of its files (Store.Integrity)
// and its consistency report (StoreConsistency). It returns an error
// wrapping ErrCorrupt naming every problem; a report that cannot be read
// is one. ops.Check runs it on an Engine's store, and a restore on the
// restored data dir before it takes the place of the old one.
func CheckStore(ctx context.Context, s Store) error {
	problems, err := s.Integrity(ctx)
	if err != nil {
		return err
	}
	rep, err := StoreConsistency(ctx, s)
	if err != nil {
		problems = append(problems, err.Error())
	} else {
		for _, p := range rep.Problems {
			if !slices.Contains(problems, p) { // FTS5's integrity is in both
				problems = append(problems, p)
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
}

// StoreConsistency is s's consistency report (Store.Consistency) with the
// counts of what s holds besides messages (PartCounts) and a problem for
// each session whose record count is wrong.
func StoreConsistency(ctx context.Context, s Store) (CheckReport, error) {
	rep, err := s.Consistency(ctx)
	if err != nil {
		return rep, err
	}
	if rep.Problems == nil {
		rep.Problems = []string{}
	}
	if rep.Sets == nil {
		rep.Sets = []SetCheck{}
	}
	c, err := s.PartCounts(ctx)
	if err != nil {
		return rep, err
	}
	rep.Parts = &c
	for _, id := range c.RecordsMiscounted {
		rep.Problems = append(rep.Problems, fmt.Sprintf("session %s: its record count differs from its records", id))
	}
	return rep, nil
}
