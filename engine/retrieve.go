package engine

import (
	"context"
	"errors"
	"sync"

	"github.com/cairn-dev/cairn/fts"
)

// A hybrid search waits mostly for the query's embedding, which needs
// neither the keyword side nor the candidates' facts; a 2-core machine has
// a core to spare meanwhile (the encoder's workers share out one query's
// layers unevenly). So retrieve runs the search's reads as three phases,
// each with its two halves at once:
//
//  1. the vector side (servingSet, the query's embedding, the nearest
//     vectors) on its own goroutine, beside the keyword side (BM25, the
//     facts of its hits, and, once the query's vector is there, the exact
//     similarities of its hits);
//  2. the turn context (engine/turncontext.go), beside the facts of the
//     vector side's hits;
//  3. the facts of the turns that turn context added.
//
// What is computed does not change, only when: the candidates, their
// scores and their facts are those of the steps run one after another
// (semantic, keyword, exactSimilarities, turnContext, then the facts of
// every candidate). The exact similarities are read for every keyword hit
// rather than for those the vector side missed, since that is not known
// yet; a hit the vector side found keeps its similarity from there.
//
// Both halves of a phase are joined before the next starts, so no
// goroutine outlives the search. The first error of either half cancels
// the other; the error returned is the one the steps run in order would
// have returned (the vector side's first), not the cancellation it caused.
// A panic in the spawned half is raised again on the caller's goroutine,
// where the adapters recover it.

// retrieve fills r's candidates (engine/hybrid.go's semantic, keyword,
// exactSimilarities and turnContext steps) and returns the facts of every
// candidate (RankFacts, or whole messages).
func (e *Engine) retrieve(ctx context.Context, r *searchRun) ([]Message, error) {
	semantic, keyword := r.mode != ModeKeyword, r.mode != ModeSemantic
	// 1. The vector side beside the keyword side.
	var kw keywordSide
	switch {
	case semantic && keyword:
		pctx, cancel := context.WithCancel(ctx)
		embedded := make(chan struct{})
		signal := sync.OnceFunc(func() { close(embedded) })
		join := alongside(func() error {
			defer signal()
			err := e.semantic(pctx, r, signal)
			if err != nil {
				cancel()
			}
			return err
		})
		kw = e.keyword(pctx, r, embedded)
		if kw.err != nil {
			cancel()
		}
		semErr := join()
		cancel()
		if err := firstCause(ctx, semErr, kw.err); err != nil {
			return nil, err
		}
	case semantic:
		if err := e.semantic(ctx, r, func() {}); err != nil {
			return nil, err
		}
	default:
		closed := make(chan struct{})
		close(closed)
		if kw = e.keyword(ctx, r, closed); kw.err != nil {
			return nil, kw.err
		}
	}
	r.kwQuery = kw.query
	r.addKeywordHits(kw.hits, kw.mass)
	for id, s := range kw.sims {
		if c := r.cands[id]; !c.HasSimilarity {
			c.Similarity, c.HasSimilarity = s, true
		}
	}

	// 2. Turn context beside the facts of the vector side's hits.
	known := make(map[int64]bool, len(r.cands))
	var rest []int64
	for _, h := range kw.hits {
		known[h.ID] = true
	}
	for id := range r.cands {
		if !known[id] {
			known[id] = true
			rest = append(rest, id)
		}
	}
	facts := kw.facts
	if len(rest) == 0 { // keyword hits only: nothing to read beside
		if err := e.turnContext(ctx, r); err != nil {
			return nil, err
		}
	} else {
		var more []Message
		pctx, cancel := context.WithCancel(ctx)
		defer cancel()
		join := alongside(func() error {
			var err error
			if more, err = e.facts(pctx, rest); err != nil {
				cancel()
			}
			return err
		})
		ctxErr := e.turnContext(pctx, r)
		if ctxErr != nil {
			cancel()
		}
		factsErr := join()
		if err := firstCause(ctx, ctxErr, factsErr); err != nil {
			return nil, err
		}
		facts = append(facts, more...)
	}

	// 3. The facts of the turns turn context added.
	var added []int64
	for id := range r.cands {
		if !known[id] {
			added = append(added, id)
		}
	}
	if len(added) > 0 {
		more, err := e.facts(ctx, added)
		if err != nil {
			return nil, err
		}
		facts = append(facts, more...)
	}
	return facts, nil
}

// keywordSide is what the keyword side of retrieve found: the hits, the
// query that ranked them, their facts and, in hybrid mode, their exact
// similarities to the query's vector.
type keywordSide struct {
	hits  []ScoredID
	query fts.Query
	mass  float64 // the query's mass (KeywordHits.Mass)
	facts []Message
	sims  map[int64]float64
	err   error
}

// alongside runs fn on its own goroutine. join waits for it and returns
// its error; a panic of fn is raised again by join, on the caller's
// goroutine.
func alongside(fn func() error) (join func() error) {
	done := make(chan struct{})
	var err error
	var panicked any
	go func() {
		defer close(done)
		defer func() { panicked = recover() }()
		err = fn()
	}()
	return func() error {
		<-done
		if panicked != nil {
			panic(panicked)
		}
		return err
	}
}

// firstCause returns the first of errs, in the order the steps would have
// run, that is not the cancellation another half's error caused (errs
// ran under a context derived from ctx, cancelled on the first error).
func firstCause(ctx context.Context, errs ...error) error {
	var cancelled error
	for _, err := range errs {
		switch {
		case err == nil:
		case ctx.Err() == nil && errors.Is(err, context.Canceled):
			if cancelled == nil {
				cancelled = err
			}
		default:
			return err
		}
	}
	return cancelled
}
