package search

import (
	"math"

	"github.com/cairn-dev/cairn/fts"
)

// Mode is the retrieval a relevance is calibrated for.
type Mode uint8

// Modes.
const (
	// Hybrid: both sides searched; a message with a vector is scored on
	// its similarity and its keyword evidence together.
	Hybrid Mode = iota
	// Semantic: nearest vectors only.
	Semantic
	// Keyword: BM25 only; also a hybrid search's message without a vector
	// yet, which is judged on the evidence it has rather than as
	// similarity 0.
	Keyword
)

// Evidence is what retrieval says of one message for one query, in
// absolute terms: nothing in it depends on the other messages found.
type Evidence struct {
	// Similarity is the cosine similarity of the query's and the message's
	// vectors (for a conversation turn, the larger of its own and its
	// context's), meaningful when HasVector.
	Similarity float64
	HasVector  bool
	// Keyword is KeywordEvidence: how much of the query the message
	// matches, in [0,1].
	Keyword float64
	// KeywordShare is the query's KeywordShare, read by hybrid search (0:
	// that of a query of keywords).
	KeywordShare float64
}

// KeywordEvidence is a BM25 score as a share of the most its query can
// score: bm25 / ((k1+1) * mass), where mass is the query's fts.QueryMass
// and k1 = 1.2 BM25's term-frequency saturation, so it is in [0,1) and
// orders hits as BM25 does. A message of average length holding every
// query term once has 1/(k1+1), about 0.45; one holding only terms no
// other message holds, but not all of the query's, has the share of the
// query's IDF mass it matches. Unlike a score divided by the best score of
// the same search, it does not make the best of a poor lot a perfect
// match. 0 when the query has no mass (an empty store).
func KeywordEvidence(bm25, mass float64) float64 {
	const k1 = 1.2
	if mass <= 0 || !(bm25 > 0) {
		return 0
	}
	return min(1, bm25/((k1+1)*mass))
}

// Model is a logistic calibration: relevance = 1 / (1 + exp(-(Bias +
// Similarity*similarity + Keyword*keyword))). Its weights are >= 0, so
// relevance never falls as either feature rises.
type Model struct {
	Bias, Similarity, Keyword float64
}

// Relevance is m's probability for the features.
func (m Model) Relevance(similarity, keyword float64) float64 {
	return sigmoid(m.Bias + m.Similarity*similarity + m.Keyword*keyword)
}

func sigmoid(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= 0:
		return 1 / (1 + math.Exp(-x))
	}
	z := math.Exp(x)
	return z / (1 + z)
}

// The calibrations of the built-in embedding model, fitted on the dev sets
// only (Cranfield, CoSQA dev and the LoCoMo dev conversations: each judged
// result in a query's first 20 a positive, every other one a negative,
// plus queries of one set asked against another set's corpus, whose every
// result is a negative; each of the four groups weighs the same):
//
//	go run ./bench/cmd/hybridbench calibrate -datasets /work/shared/datasets -models builtin=builtin -cache /tmp/cairn-quality-cache
//
// prints them, with the reliability table and the floor's table
// (bench/README.md, "Calibrated relevance"). Semantic and keyword search
// are logistic regressions on their one feature. Hybrid search ranks by
// similarity + KeywordShare(query) * keyword, and its two constants are
// the logistic (Platt) fit on that sum. Another model's similarities are
// read with the same constants: roughly right for models of the same
// family.
const (
	hybridBias, hybridSimilarity     = -6.12, 5.53
	semanticBias, semanticSimilarity = -6.13, 7.00
	keywordBias, keywordKeyword      = -4.39, 7.64
)

// The weight of the keyword evidence against the similarity in hybrid
// search, chosen for ranking on the dev sets, then calibrated. A query of
// keywords (CoSQA's "python check if a variable is iterable") is matched
// best by meaning: at 1/3 hybrid search equals semantic search on CoSQA
// and a higher share loses there (0.600 at 1/3, 0.593 at 0.5, 0.570 at 0.9,
// DCG@10 over hybrid's first 20). A question in words (Cranfield, LoCoMo)
// shares names, places and objects with its answer: 0.9
// there (Cranfield 1.341 at 1/3, 1.387 at 0.9; every LoCoMo dev
// conversation gains 0.03-0.06). A message holding every word of the
// query (keyword 1/(k1+1), about 0.45) outranks one that holds none unless
// its similarity is 0.15 (keywords) or 0.41 (question) higher.
const (
	KeywordsKeywordShare = 1.0 / 3
	QuestionKeywordShare = 0.9
	ShortKeywordShare    = 1.5
)

// KeywordShare is the keyword evidence's weight in hybrid search for
// query: ShortKeywordShare for a query of at most two terms, whose vector
// says little (no dev set has such queries: the weight makes an exact match
// of a one-word query rank first and pass the floor, a message holding all
// of it outranking one that holds none unless its similarity is 0.68
// higher), QuestionKeywordShare for a question in words (IsQuestion), else
// KeywordsKeywordShare.
func KeywordShare(query string) float64 {
	switch {
	case len(fts.Terms(query)) <= 2:
		return ShortKeywordShare
	case IsQuestion(query):
		return QuestionKeywordShare
	}
	return KeywordsKeywordShare
}

// ModelOf returns the calibration of mode for a query whose KeywordShare
// is share (0: a query of keywords): the keyword one for a hybrid
// search's message without a vector.
func ModelOf(mode Mode, hasVector bool, share float64) Model {
	switch {
	case mode == Semantic:
		return Model{Bias: semanticBias, Similarity: semanticSimilarity}
	case mode == Keyword || !hasVector:
		return Model{Bias: keywordBias, Keyword: keywordKeyword}
	}
	if share <= 0 {
		share = KeywordsKeywordShare
	}
	return Model{Bias: hybridBias, Similarity: hybridSimilarity, Keyword: hybridSimilarity * share}
}

// Relevance is the calibrated probability that the message is relevant to
// the query, in [0,1], by mode's calibration; it also orders the mode's
// results (RankScore).
func Relevance(mode Mode, ev Evidence) float64 { return RankScore(mode, ev) }

// RankScore is what orders a mode's results: the mode's calibration (in
// hybrid search the fit on similarity + share * keyword). Taking the larger
// of it and the keyword and semantic calibrations as the reported relevance
// was measured and dropped: the keyword calibration's floor (0.012 at no
// evidence) lifted every answerless query's results, and no floor then
// both kept 95% of the relevant results and silenced 80% of the
// answerless queries.
func RankScore(mode Mode, ev Evidence) float64 {
	m := ModelOf(mode, ev.HasVector, ev.KeywordShare)
	sim := 0.0
	if ev.HasVector {
		sim = ev.Similarity
	}
	return m.Relevance(sim, ev.Keyword)
}

// Boost raises relevance r by a boost b >= 0 that the query's named
// senders and times earn it: b*boostLogOdds is added to r's log-odds, so
// the result stays in (0,1), is never below r, and a message without
// evidence (r near 0) stays near 0 rather than being made relevant by its
// sender or date alone. boostLogOdds makes a boost b near r = 0.5 add
// about b, as the boosts were measured as additions (engine/queryshape.go).
func Boost(r, b float64) float64 {
	const boostLogOdds = 4
	switch {
	case r <= 0 || b <= 0:
		return max(r, 0)
	case r >= 1:
		return 1
	}
	return sigmoid(math.Log(r/(1-r)) + boostLogOdds*b)
}
