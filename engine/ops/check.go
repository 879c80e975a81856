package ops

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/engine"
)

// Check verifies the store: its own checks of its files (Store.Integrity:
// on the data dir SQLite's quick_check, the foreign keys, the channel
// counters and FTS5's integrity check) and the consistency report
// (Consistency: the keyword index and every vector set against the
// messages). It returns an error wrapping engine.ErrCorrupt describing the
// problems found; a consistency report that cannot be read is one.
func Check(ctx context.Context, eng *engine.Engine) error {
	var problems []string
	err := eng.Use(func(s engine.Store) error {
		var err error
		if problems, err = s.Integrity(ctx); err != nil {
			return err
		}
		rep, err := consistency(ctx, eng, s)
		if err != nil {
			problems = append(problems, err.Error())
			return nil
		}
		for _, p := range rep.Problems {
			if !slices.Contains(problems, p) { // FTS5's integrity is in both
				problems = append(problems, p)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", engine.ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
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
	rep, err := s.Consistency(ctx)
	if err != nil {
		return rep, err
	}
	if rep.Problems == nil {
		rep.Problems = []string{}
	}
	if rep.Sets == nil {
		rep.Sets = []engine.SetCheck{}
	}
	if emb := eng.Options().Embedder; emb != nil {
		rep.Embedder = emb.ModelID()
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
