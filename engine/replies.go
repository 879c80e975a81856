package engine

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn/engine/search"
)

// In a conversation the answer to a question is the next message, and it
// rarely repeats the question's words: "How long have you been married?"
// is found, "5 years already!" is not. A hybrid search therefore lifts
// the reply to a message that asks something among its best candidates:
// the reply's relevance becomes at least replyWeight times the asker's,
// and the reply joins the candidates when neither side found it. What is
// stored and returned does not change; only the order does.
//
// A reply is the next message of the same channel (by created_at, then
// id), from another sender, at most replyWithin later; it must pass the
// search's filter. A channel written by one sender (notes, documents,
// imported corpora) has no replies, so nothing changes there.
//
// It runs only when QueryAnalysis.LiftReplies asks for it: left one
// LoCoMo dev conversation out, the lift chosen on the other three lowered
// hybrid R@10 on conversation 41 (0.831 -> 0.828) while it raised the
// other three (bench/README.md).
//
// Measured on the LoCoMo dev conversations (bench/README.md): replies of
// the 10 best candidates (5 or 20 made no difference), only when the asker
// contains a question mark; hybrid R@10 0.782 at weight 0.85, 0.797 at
// 0.9, 0.801-0.805 from 0.93 to 0.97, 0.791 at 1. Lifting every
// candidate's reply, or at weight 1, pushes other evidence out of the
// first page and loses more than it gains.
const (
	replyWeight = 0.95
	replyTop    = 10
	replyWithin = 12 * time.Hour
)

// liftReplies is the reply step of hybrid search (see replyWeight). It
// returns the ids of the candidates it added.
func (e *Engine) liftReplies(ctx context.Context, r *searchRun) ([]int64, error) {
	if r.mode != ModeHybrid || len(r.cands) == 0 || !e.opts.QueryAnalysis.LiftReplies {
		return nil, nil
	}
	best := r.cands.Best(replyTop, func(c *search.Candidate) (float64, bool) { return c.Fused, true })
	pairs, err := e.store.Replies(ctx, best, replyWithin, r.plan.filter.selection())
	if err != nil {
		return nil, err
	}
	replyOf := map[int64]int64{} // reply -> its asker with the best relevance
	var replies []int64
	for _, p := range pairs {
		prev, seen := replyOf[p.Reply]
		if !seen {
			replies = append(replies, p.Reply)
		}
		if !seen || r.cands[p.Asker].Fused > r.cands[prev].Fused {
			replyOf[p.Reply] = p.Asker
		}
	}
	var added []int64
	for _, id := range replies {
		asker := r.cands[replyOf[id]]
		weight := orDefault(e.opts.QueryAnalysis.ReplyWeight, replyWeight)
		c, found := r.cands[id]
		if !found {
			c = r.cands.Get(id)
			added = append(added, id)
		}
		// The reply is about as likely relevant as its question: its
		// relevance is lifted as its rank is.
		c.Fused = max(c.Fused, weight*asker.Fused)
		c.Relevance = max(c.Relevance, weight*asker.Relevance)
	}
	if len(added) > 0 {
		// The added replies' similarity is shown in their scores and says
		// they have a vector.
		sims, err := e.store.Similarities(ctx, r.set, r.qvec, added)
		if err != nil {
			return nil, err
		}
		for id, s := range sims {
			c := r.cands[id]
			c.Similarity, c.HasSimilarity = s, true
		}
	}
	return added, nil
}
