package engine

// The tuned constants of search relevance, chosen on the dev sets
// (bench/README.md, "Hybrid search quality" and "LoCoMo"); one place so a
// re-measurement changes only this file.
const (
	// KeywordWeight is the keyword side's share in FusionWeighted and
	// FusionMinMax (the semantic side has the rest). With all-MiniLM-L6-v2
	// the semantic side is the stronger one on every dev set (CoSQA: nDCG@10
	// 0.603 against BM25's 0.384); minmax at 0.1 is the only setting of the
	// grid at least as good as the better side on all four, 0.05-0.12 on
	// CoSQA, and keyword still decides among near-equal similarities
	// (names, numbers, identifiers).
	KeywordWeight = 0.1
	// senderBoost is added to the relevance of the messages of a sender
	// the query names (engine/queryshape.go).
	senderBoost = 0.1
)
