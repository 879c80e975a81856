package engine

import (
	"context"
	"fmt"
	"strings"
)

// The Engine's side of the optional Store operations (backend_ops.go):
// each runs after the Engine's method validated its input, and refuses
// the operation when the Store lacks the capability.

// backendOp returns e's Store as a C, or the refusal naming the
// Engine's method that was called.
func backendOp[C any](e *Engine) (C, error) {
	c, ok := e.store.(C)
	if !ok {
		return c, unsupportedOnBackend(e.backend)
	}
	return c, nil
}

// onBackend runs fn with e's Store as a C, guarded against Close; the
// refusal when the Store lacks C.
func onBackend[C, R any](e *Engine, fn func(C) (R, error)) (R, error) {
	var zero R
	c, err := backendOp[C](e)
	if err != nil {
		return zero, err
	}
	done, err := e.enterStore()
	if err != nil {
		return zero, err
	}
	defer done()
	return fn(c)
}

// backendCreateChannel is CreateChannel on a Store.
func (e *Engine) backendCreateChannel(ctx context.Context, in NewChannel, name string) (Channel, error) {
	return onBackend(e, func(cs ChannelStore) (Channel, error) {
		c := Channel{ID: in.ID, ChannelType: ChannelPlain, Name: name, Description: in.Description, ProjectID: in.Project,
			CreatedAt: fromMillis(e.opts.Now().UnixMilli())}
		created, err := cs.CreateChannel(ctx, c)
		if err != nil {
			return Channel{}, err
		}
		if !created {
			return Channel{}, fmt.Errorf("channel %q: %w", in.ID, ErrExists)
		}
		return c, nil
	})
}

// backendAllOfChannel is channelMessages (every message of a channel,
// in id order) on a Store.
func (e *Engine) backendAllOfChannel(ctx context.Context, channel string) ([]Message, error) {
	ids, err := onBackend(e, func(cs ChannelStore) ([]int64, error) { return cs.ChannelMessageIDs(ctx, channel) })
	if err != nil {
		return nil, err
	}
	return e.messagesInBatches(ctx, ids)
}

// backendStoreStats is StoreStats on a Store. Search counts are this
// process's: processes sharing a Store do not add theirs up.
func (e *Engine) backendStoreStats(ctx context.Context) (*StoreStats, error) {
	if _, err := backendOp[StatsStore](e); err != nil {
		return nil, err
	}
	backlog, err := e.VectorBacklog(ctx, "")
	if err != nil {
		return nil, err
	}
	bst, err := onBackend(e, func(ss StatsStore) (BackendStats, error) { return ss.Stats(ctx) })
	if err != nil {
		return nil, err
	}
	st := &StoreStats{ByChannel: bst.ByChannel, ByType: bst.ByType, ByAgent: bst.ByAgent, Sessions: bst.Sessions, Bytes: bst.Bytes, Vectors: backlog}
	for _, n := range st.ByChannel {
		st.Messages += n
	}
	if e.dir != "" {
		var local DiskStats
		fileBytes(e.dir, &local)
		st.Bytes.Models = local.Models
		st.Bytes.Total += local.Models
	}
	st.Bytes.perMessage(st.Messages)
	if es, ok := e.EmbedderStats(); ok {
		st.Embedder = &es
	} else {
		st.Notes = append(st.Notes, "embedding cache hit rate: no embedder with a cache in this process")
	}
	n, us := e.searches.n.Load(), e.searches.us.Load()
	if _, ok := e.store.(SearchCountStore); ok {
		stored, err := onBackend(e, func(sc SearchCountStore) ([2]int64, error) {
			n, us, err := sc.SearchTotals(ctx)
			return [2]int64{n, us}, err
		})
		if err != nil {
			return nil, err
		}
		n, us = n+stored[0], us+stored[1]
	} else {
		st.Notes = append(st.Notes, "search counts are this process's: processes sharing a "+e.backend+" store keep their own")
	}
	st.Search = SearchStats{Searches: n}
	if n > 0 {
		st.Search.AvgMs = float64(us) / float64(n) / 1000
	}
	return st, nil
}

// backendConsistency is Consistency on a Store.
func (e *Engine) backendConsistency(ctx context.Context) (CheckReport, error) {
	return onBackend(e, func(cs ConsistencyStore) (CheckReport, error) {
		rep, err := cs.Consistency(ctx)
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
	})
}

// backendCheck is Check on a Store: the consistency report's problems
// are corruption.
func (e *Engine) backendCheck(ctx context.Context) error {
	rep, err := e.backendConsistency(ctx)
	if err != nil {
		return err
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("%w: %s", ErrCorrupt, strings.Join(rep.Problems, "; "))
	}
	return nil
}
