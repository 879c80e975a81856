package search

// DefaultFloor is the relevance below which cairn's own surfaces return
// nothing unless asked (a request's min_score). Chosen on the dev sets
// (bench/README.md, "Calibrated relevance"): the highest floor that keeps
// at least 95% of the relevant results hybrid search ranks in its top 10
// on each set (Cranfield, CoSQA dev, LoCoMo dev); it also silences more
// than 80% of the queries asked against a corpus that cannot answer them.
// It is low because relevance is a probability: among a query's close
// candidates few are judged relevant, and a conversation's answer is
// often a short turn with little evidence of its own.
const DefaultFloor = 0.02

// Kept reports whether a result of relevance r passes floor.
func Kept(r, floor float64) bool { return r >= floor }
