package engine

// In a conversation, hybrid search's fused list and semantic search's list
// with turn context (engine/turncontext.go) find different turns: the
// fused list has the words a question shares with its answer and the
// replies it lifted, the context list the short turns whose meaning is in
// the turn before or after them. Neither list alone holds what the other
// finds, and a relevance mixed from both scores (context similarity
// inside the min-max fusion) did not rank better than either; their ranks
// blended do. So in a conversation hybrid search ranks each candidate by
//
//	1/(blendK + fused rank) + blendSemanticWeight/(blendK + semantic rank)
//
// divided by its largest value, where the semantic rank orders the
// candidates as semantic search would (the larger of the own and the
// context similarity, with the boosts of the senders and times the query
// names). What is stored and returned does not change; Scores.Fused is the
// blend.
//
// It runs only when turn context found a neighbour for one of the
// candidates: a channel written by one sender (notes, documents, imported
// corpora) has no neighbours, so its semantic list is the fused list's
// own similarity and hybrid search ranks there exactly as before.
//
// It holds on each LoCoMo dev conversation when chosen on the other three
// (bench/README.md, "Query rules left one LoCoMo conversation out").
const (
	blendSemanticWeight = 1.5
	blendK              = 5
)

// blendRanks is the rank blend step of hybrid search (see
// blendSemanticWeight). facts holds the candidates' senders and times.
func (e *Engine) blendRanks(r *searchRun, facts []Message) {
	if !e.blends(r) {
		return
	}
	contextFound := false
	for _, c := range r.cands {
		contextFound = contextFound || c.hasCtx
	}
	if !contextFound {
		return
	}
	semantic := make(map[*candidate]float64, len(facts))
	for _, f := range facts {
		if c := r.cands[f.ID]; c != nil && c.hasSim {
			semantic[c] = r.boosts.Apply(clamp01(c.fusionSim()), f.SenderID, f.CreatedAt)
		}
	}
	fusedOrder := r.cands.best(len(r.cands), func(c *candidate) (float64, bool) { return c.fused, true })
	semanticOrder := r.cands.best(len(semantic), func(c *candidate) (float64, bool) {
		s, ok := semantic[c]
		return s, ok
	})
	qa := e.opts.QueryAnalysis
	weight, k := orDefault(qa.BlendSemanticWeight, blendSemanticWeight), orDefault(qa.BlendK, blendK)
	blend := make(map[int64]float64, len(fusedOrder))
	for i, id := range fusedOrder {
		blend[id] += 1 / (k + float64(i+1))
	}
	for i, id := range semanticOrder {
		blend[id] += weight / (k + float64(i+1))
	}
	top := (1 + weight) / (k + 1)
	for id, b := range blend {
		r.cands[id].fused = b / top
	}
}

// blends reports whether search r blends its fused ranks with the
// semantic ones (blendRanks), and so computes turn context in hybrid mode
// too.
func (e *Engine) blends(r *searchRun) bool {
	qa := e.opts.QueryAnalysis
	return r.mode == ModeHybrid && r.vecUsed && !qa.NoRankBlend && !qa.NoTurnContext
}
