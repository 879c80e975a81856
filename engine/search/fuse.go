package search

import "math"

// The fusions of a search's two lists. Whatever the fusion, a candidate's
// Relevance is the calibrated one (Calibrate); a fusion decides only the
// order (Candidate.Fused). The engine picks one per search.

// Calibrate sets each candidate's calibrated relevance in mode m (with
// the query's keyword share in hybrid mode: KeywordShare) and orders it by
// the mode's calibration (RankScore): in one mode it orders as the mode's
// own score (BM25, similarity) does. It is the whole of the calibrated
// fusion, and the first step of every other.
func Calibrate(m Mode, share float64, cs Candidates) {
	for _, c := range cs {
		ev := Evidence{Similarity: c.FusionSimilarity(), HasVector: c.HasSimilarity, Keyword: c.Keyword, KeywordShare: share}
		c.Relevance, c.Fused = Relevance(m, ev), RankScore(m, ev)
	}
}

// rrfK is the reciprocal rank fusion constant.
const rrfK = 60

// FuseRRF orders the candidates by reciprocal rank fusion,
// 1/(60+rank_keyword) + 1/(60+rank_semantic), divided by its maximum 2/61.
func FuseRRF(cs Candidates) {
	for _, c := range cs {
		var s float64
		if c.KeywordRank > 0 {
			s += 1 / float64(rrfK+c.KeywordRank)
		}
		if c.SemanticRank > 0 {
			s += 1 / float64(rrfK+c.SemanticRank)
		}
		c.Fused = s / (2.0 / float64(rrfK+1))
	}
}

// FuseWeighted orders the candidates by kw*keyword + (1-kw)*similarity,
// where keyword is the BM25 score divided by the best of the query's
// keyword hits and similarity the raw cosine similarity clamped to [0,1].
func FuseWeighted(kw float64, cs Candidates) {
	for _, c := range cs {
		c.Fused = kw*c.KeywordNorm + (1-kw)*clamp01(c.Similarity)
	}
}

// FuseMinMax orders the candidates by both sides min-max normalized over
// the candidates, the keyword side with the share kw.
func FuseMinMax(kw float64, cs Candidates) {
	klo, khi, slo, shi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, c := range cs {
		klo, khi = min(klo, c.BM25), max(khi, c.BM25)
		if c.HasSimilarity {
			slo, shi = min(slo, c.Similarity), max(shi, c.Similarity)
		}
	}
	for _, c := range cs {
		var k, s float64
		if khi > klo {
			k = (c.BM25 - klo) / (khi - klo)
		} else if c.BM25 > 0 {
			k = 1
		}
		if c.HasSimilarity {
			if shi > slo {
				s = (c.Similarity - slo) / (shi - slo)
			} else {
				s = 1
			}
		}
		c.Fused = kw*k + (1-kw)*s
	}
}
