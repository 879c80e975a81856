// Package search holds the pure steps of a search, the ones that need no
// store: reading the query (the senders it names, NameMentions; the times
// it names, TimeMentions; whether it is a question in words, IsQuestion)
// and the boosts those earn (Boosts); the absolute evidence of each side
// (Evidence) and its calibration into one relevance in [0,1] that means
// the same in every mode, store and query (Relevance); the candidates both
// sides found (Candidates) and their fusion into one order (Calibrate,
// FuseRRF, FuseMinMax, FuseWeighted), blended in a conversation with the
// semantic ranks (BlendRanks); the relevance floor below which a result is
// not returned (DefaultFloor); the ranking formula that combines relevance
// with recency and confidence (Weights); and the prompt gate below which a
// per-prompt recall injects nothing (PromptEvidence).
//
// The engine orchestrates a search (plan, retrieve through its store,
// these steps, hydrate) and keeps what needs the store or its own types:
// the request and its validation, the ranking profiles, the retrieval,
// turn context and the reply lift, the results.
//
// Its functions take and return plain values and keep no state; they are
// safe for concurrent use on distinct values (a Candidates map is one
// search's). It may import fts and the standard library only; engine
// imports it, never the reverse.
package search
