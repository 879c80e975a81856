package engine

import "github.com/cairn-dev/cairn/engine/search"

// blendRanks is the rank blend step of hybrid search in a conversation
// (search.BlendRanks). facts holds the candidates' senders and times, for
// the boosts of the semantic ranks.
func (e *Engine) blendRanks(r *searchRun, facts []Message) {
	if !e.blends(r) {
		return
	}
	semantic := make(map[*search.Candidate]float64, len(facts))
	for _, f := range facts {
		if c := r.cands[f.ID]; c != nil && c.HasSimilarity {
			semantic[c] = r.boosts.Apply(c.SemanticScore(), f.SenderID, f.CreatedAt)
		}
	}
	qa := e.opts.QueryAnalysis
	search.BlendRanks(r.cands, semantic, orDefault(qa.BlendSemanticWeight, search.BlendSemanticWeight), orDefault(qa.BlendK, search.BlendK))
}

// blends reports whether search r blends its fused ranks with the
// semantic ones (blendRanks), and so computes turn context in hybrid mode
// too.
func (e *Engine) blends(r *searchRun) bool {
	qa := e.opts.QueryAnalysis
	return r.mode == ModeHybrid && r.vecUsed && !qa.NoRankBlend && !qa.NoTurnContext
}
