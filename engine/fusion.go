package engine

// The tuned constants of search relevance, chosen on the dev sets
// (bench/README.md, "Hybrid search quality" and "LoCoMo"); one place so a
// re-measurement changes only this file.
const (
	// KeywordWeight is the keyword side's share in FusionWeighted and
	// FusionMinMax (the semantic side has the rest).
	KeywordWeight = 0.5
	// senderBoost is added to the relevance of the messages of a sender
	// the query names (engine/queryshape.go).
	senderBoost = 0.1
)
