package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// ConvertProgress reports a conversion's progress in one collection.
type ConvertProgress func(collection string, done, total int)

// ConvertVectors converts the message collections written before message
// vectors were stored in messageCode (float32, or plain SQ8 codes, which
// sq8r keeps as they are) in place, one
// transaction per collection, keeping their graphs: a crash leaves each
// collection wholly converted or as it was, and the next call resumes. The
// background worker (cairn serve) runs it when it starts; progress, when
// not nil, is called as vectors are converted, and the logger reports each
// tenth. Collections already converted cost a lookup.
func (e *Store) ConvertVectors(ctx context.Context, progress ConvertProgress) error {
	if e.vec == nil || e.vec.store == nil {
		return nil
	}
	sets, err := e.liveSets(ctx, e.r)
	if err != nil {
		return err
	}
	for _, s := range sets {
		c, err := e.vec.store.GetCollection(ctx, chroma.DefaultTenant, VectorDatabase, s.Collection)
		if errors.Is(err, chroma.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("engine: vectors: %w", err)
		}
		if c.Config.HNSW.VectorCode == messageCode {
			continue
		}
		e.opts.Logger.Info("converting message vectors to 8-bit residual codes", "collection", s.Collection, "model", s.ModelID)
		lastTenth := -1
		err = e.vec.store.Recode(ctx, c.ID, messageCode, func(done, total int) {
			if progress != nil {
				progress(s.Collection, done, total)
			}
			if total > 0 && done*10/total > lastTenth {
				lastTenth = done * 10 / total
				e.opts.Logger.Info("converting message vectors", "collection", s.Collection, "done", done, "total", total)
			}
		})
		if err != nil {
			return fmt.Errorf("engine: converting vectors of %s: %w", s.Collection, err)
		}
	}
	return nil
}
