package engine

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn/engine/search"
)

// A turn of a conversation often says little alone ("Thanks, Gina! I'm
// excited!"): what it is about is in the turn before or after it. Without
// storing a second vector per message, a search can still score a turn
// with its context: the stored vectors of two consecutive turns a and b,
// added and normalized, are close to what embedding the two turns together
// gives, and that pair vector's similarity to the query is
//
//	(q·a + q·b) / |a + b|
//
// A candidate's context similarity is the best of its pairs with the turn
// before and the turn after it; fusion uses the larger of the message's
// own similarity and search.ContextWeight times its context similarity. The turn
// after one of the best candidates by similarity joins the candidates, as
// the turn a second vector "previous turn + turn" would have found. What
// is stored and returned does not change, and Scores.Similarity stays the
// message's own.
//
// A neighbour is the message just before or after in the same channel (by
// created_at, then id), from another sender, at most contextWithin away:
// a channel written by one sender (notes, documents, imported corpora) has
// no neighbours, so nothing changes there.
//
// It runs in semantic mode, and in hybrid mode for the rank blend
// (engine/rankblend.go), which ranks by it beside the fusion. Both modes'
// calibrated relevance (engine/search) reads the larger similarity too, so
// that a short answer keeps the relevance its context gives it and passes
// the relevance floor. Measured on the LoCoMo dev
// conversations (bench/README.md): semantic R@10 0.705 -> 0.795 (best of
// weights 0.8-1.0); as hybrid's similarity R@10 did not move (0.805 ->
// 0.804; 0.800-0.811 over weights 0.8-1.0 and the 10-100 best), because
// the reply lift (engine/replies.go) already finds these turns there. It
// costs 0.9-1.3 ms of CPU a query at 20,000 messages
// (BenchmarkTurnContextCPU), mostly the neighbours' SQL read and the
// vector read.
const (
	contextTop    = 30
	contextWithin = time.Hour
)

// turnContext is the context step of semantic search and of hybrid
// search's rank blend (see
// search.ContextWeight): it sets the context similarity of the contextTop
// candidates most similar to the query and of the turns after them, which
// join the candidates when they pass the filter.
func (e *Engine) turnContext(ctx context.Context, r *searchRun) error {
	if (r.mode != ModeSemantic && !e.blends(r)) || !r.vecUsed || len(r.cands) == 0 || e.opts.QueryAnalysis.NoTurnContext {
		return nil
	}
	ts := e.store
	best := r.cands.Best(contextTop, func(c *search.Candidate) (float64, bool) { return c.Similarity, c.HasSimilarity })
	if len(best) == 0 {
		return nil
	}
	nbs, err := ts.Neighbours(ctx, best, contextWithin, r.plan.filter.selection())
	if err != nil {
		return err
	}
	ids := append([]int64(nil), best...)
	for _, id := range best {
		if nb := nbs[id]; nb.Prev != 0 {
			ids = append(ids, nb.Prev)
		}
		if nb := nbs[id]; nb.Next != 0 {
			ids = append(ids, nb.Next)
		}
	}
	vecs, err := ts.SetVectors(ctx, r.set, ids)
	if err != nil {
		return VectorStoreError(err)
	}
	// with sets the context similarity of c from the pair (a, b) when
	// both have vectors.
	with := func(c *search.Candidate, a, b int64) {
		if va, vb := vecs[a], vecs[b]; va != nil && vb != nil {
			c.SetContext(search.PairSimilarity(r.qvec, va, vb))
		}
	}
	for _, id := range best {
		c, nb := r.cands[id], nbs[id]
		if nb.Prev != 0 {
			with(c, nb.Prev, id)
		}
		if nb.Next == 0 {
			continue
		}
		with(c, id, nb.Next)
		if v := vecs[nb.Next]; nb.NextPasses && v != nil {
			nc, found := r.cands[nb.Next]
			if !found {
				nc = r.cands.Get(nb.Next)
				nc.Similarity, nc.HasSimilarity = Cosine(r.qvec, v), true
			}
			with(nc, id, nb.Next)
		}
	}
	return nil
}

// TurnNeighbours are a message's neighbouring turns (0: none).
type TurnNeighbours struct {
	Prev, Next int64
	NextPasses bool // the turn after passes the search's filter, so it may join the candidates
}

// TurnNeighboursOf reads a store's row for one turn, whose columns may be
// NULL: the previous turn p counts when pOK, the next n when nOK (with
// nPasses). ok is false when the row names neither, so that a store keeps
// only the turns that have one.
func TurnNeighboursOf(p *int64, pOK *bool, n *int64, nOK, nPasses *bool) (nb TurnNeighbours, ok bool) {
	if p != nil && pOK != nil && *pOK {
		nb.Prev = *p
	}
	if n != nil && nOK != nil && *nOK {
		nb.Next, nb.NextPasses = *n, nPasses != nil && *nPasses
	}
	return nb, nb != TurnNeighbours{}
}
