// Package search holds the pure steps of a search, the ones that need no
// store: reading the query (the senders it names, NameMentions; the times
// it names, TimeMentions; whether it is a question in words, IsQuestion)
// and the boosts those earn (Boosts); the absolute evidence of each side
// (Evidence), its calibration into one relevance in [0,1] that means the
// same in every mode, store and query (Relevance); the relevance floor
// below which a result is not returned (DefaultFloor); and the prompt gate
// below which a per-prompt recall injects nothing (PromptEvidence). The
// engine orchestrates a search (plan, retrieve through its store, then
// these steps, then hydrate) and calls this package for each.
//
// Its functions take and return plain values and keep no state, so they
// are safe for concurrent use. It may import fts and the standard library
// only; engine imports it, never the reverse.
package search
