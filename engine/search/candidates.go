package search

import (
	"math"
	"sort"
)

// Candidate is one message found by either side of a search, with what
// each side said of it and, after fusion, its relevance and the score that
// orders it.
type Candidate struct {
	// BM25 is its BM25 score; KeywordNorm that score divided by the best
	// of the query's keyword hits; Keyword its keyword evidence
	// (KeywordEvidence); KeywordRank its 1-based rank among the keyword
	// hits, 0 when it is not one.
	BM25, KeywordNorm, Keyword float64
	KeywordRank                int
	// Similarity is the cosine similarity of the query's and its vector,
	// when HasSimilarity; SemanticRank its 1-based rank in the vector
	// list, 0 when it is not in it.
	Similarity    float64
	HasSimilarity bool
	SemanticRank  int
	// Context is its similarity with a neighbouring turn, when HasContext
	// (SetContext).
	Context    float64
	HasContext bool
	// Fused orders the candidates: Relevance itself with the calibrated
	// fusion, another fusion's own score, and in a conversation the rank
	// blend (BlendRanks).
	Fused float64
	// Relevance is the calibrated relevance, with the boosts and reply
	// lifts the query earns it.
	Relevance float64
	// Stale: its breadcrumbs changed or are gone (a ranking may demote it).
	Stale bool
}

// Candidates are a search's candidates by message id.
type Candidates map[int64]*Candidate

// Get returns the candidate of id, added empty when it is not one yet.
func (cs Candidates) Get(id int64) *Candidate {
	c := cs[id]
	if c == nil {
		c = &Candidate{}
		cs[id] = c
	}
	return c
}

// IDs returns the candidates' message ids (in no particular order).
func (cs Candidates) IDs() []int64 {
	ids := make([]int64, 0, len(cs))
	for id := range cs {
		ids = append(ids, id)
	}
	return ids
}

// Best returns the ids of the n candidates with the highest score among
// those score accepts, best first, ties by larger id.
func (cs Candidates) Best(n int, score func(*Candidate) (float64, bool)) []int64 {
	type scored struct {
		id int64
		s  float64
	}
	all := make([]scored, 0, len(cs))
	for id, c := range cs {
		if s, ok := score(c); ok {
			all = append(all, scored{id, s})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].s != all[j].s {
			return all[i].s > all[j].s
		}
		return all[i].id > all[j].id
	})
	ids := make([]int64, min(n, len(all)))
	for i := range ids {
		ids[i] = all[i].id
	}
	return ids
}

// ContextWeight is the weight of a conversation turn's context
// similarity against its own (FusionSimilarity): the best of 0.8-1.0 on
// the LoCoMo dev conversations (the engine's turn context step).
const ContextWeight = 0.9

// FusionSimilarity is the similarity semantic search ranks by (and the
// semantic ranks of the rank blend): the message's own, or its context
// similarity times ContextWeight when larger. The calibrated relevance of
// both modes reads it too.
func (c *Candidate) FusionSimilarity() float64 {
	if c.HasContext {
		return max(c.Similarity, ContextWeight*c.Context)
	}
	return c.Similarity
}

// ContextAbove is the candidate's context similarity as FusionSimilarity
// uses it, when it is above the own similarity (else 0), clamped to [0,1].
func (c *Candidate) ContextAbove() float64 {
	if s := c.FusionSimilarity(); c.HasContext && s > c.Similarity {
		return clamp01(s)
	}
	return 0
}

// SemanticScore is what semantic search ranks the candidate by, before
// the query's boosts: FusionSimilarity clamped to [0,1].
func (c *Candidate) SemanticScore() float64 { return clamp01(c.FusionSimilarity()) }

// ShownSimilarity is the similarity a result shows: its own, clamped to
// [0,1].
func (c *Candidate) ShownSimilarity() float64 { return clamp01(c.Similarity) }

// PairSimilarity is the cosine similarity of q to a + b: the stored
// vectors of two consecutive turns, added, are close to what embedding the
// two turns together gives, so it scores a turn with its context without a
// second vector (the engine's turn context step, SetContext). 0 when the
// dimensions differ or a vector is zero.
func PairSimilarity(q, a, b []float32) float64 {
	if len(a) != len(q) || len(b) != len(q) {
		return 0
	}
	var dot, nn, qq float64
	for i := range q {
		s := float64(a[i]) + float64(b[i])
		dot += float64(q[i]) * s
		nn += s * s
		qq += float64(q[i]) * float64(q[i])
	}
	if nn == 0 || qq == 0 {
		return 0
	}
	return dot / math.Sqrt(nn*qq)
}

// SetContext raises the candidate's context similarity to s.
func (c *Candidate) SetContext(s float64) {
	if !c.HasContext || s > c.Context {
		c.Context, c.HasContext = s, true
	}
}

func clamp01(x float64) float64 {
	switch {
	case x < 0 || math.IsNaN(x):
		return 0
	case x > 1:
		return 1
	}
	return x
}
