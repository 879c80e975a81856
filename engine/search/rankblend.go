package search

// In a conversation, hybrid search's fused list and semantic search's list
// with turn context find different turns: the fused list has the words a
// question shares with its answer and the replies it lifted, the context
// list the short turns whose meaning is in the turn before or after them.
// Neither list alone holds what the other finds, and a relevance mixed
// from both scores (context similarity inside the min-max fusion) did not
// rank better than either; their ranks blended do. So in a conversation
// hybrid search ranks each candidate by
//
//	1/(BlendK + fused rank) + BlendSemanticWeight/(BlendK + semantic rank)
//
// divided by its largest value, where the semantic rank orders the
// candidates as semantic search would (the larger of the own and the
// context similarity, with the boosts of the senders and times the query
// names). What is stored and returned does not change; Candidate.Fused is
// the blend.
//
// It runs only when turn context found a neighbour for one of the
// candidates: a channel written by one sender (notes, documents, imported
// corpora) has no neighbours, so its semantic list is the fused list's
// own similarity and hybrid search ranks there exactly as before.
//
// It holds on each LoCoMo dev conversation when chosen on the other three
// (bench/README.md, "Query rules left one LoCoMo conversation out").
const (
	BlendSemanticWeight = 1.5
	BlendK              = 5
)

// BlendRanks blends the candidates' fused ranks with their semantic ranks
// (see BlendSemanticWeight; weight and k replace BlendSemanticWeight and
// BlendK), when a candidate has a context similarity. semantic holds the
// semantic score of each candidate with a similarity (its
// FusionSimilarity clamped to [0,1], with the query's boosts).
func BlendRanks(cs Candidates, semantic map[*Candidate]float64, weight, k float64) {
	contextFound := false
	for _, c := range cs {
		contextFound = contextFound || c.HasContext
	}
	if !contextFound {
		return
	}
	fusedOrder := cs.Best(len(cs), func(c *Candidate) (float64, bool) { return c.Fused, true })
	semanticOrder := cs.Best(len(semantic), func(c *Candidate) (float64, bool) {
		s, ok := semantic[c]
		return s, ok
	})
	blend := make(map[int64]float64, len(fusedOrder))
	for i, id := range fusedOrder {
		blend[id] += 1 / (k + float64(i+1))
	}
	for i, id := range semanticOrder {
		blend[id] += weight / (k + float64(i+1))
	}
	top := (1 + weight) / (k + 1)
	for id, b := range blend {
		cs[id].Fused = b / top
	}
}
