// Package search holds the pure steps of a search that turn what retrieval
// found into what a caller is told: the absolute evidence of each side
// (Evidence), its calibration into one relevance in [0,1] that means the
// same in every mode, store and query (Relevance), the relevance floor
// below which a result is not returned (DefaultFloor), and the prompt gate
// below which a per-prompt recall injects nothing (PromptEvidence).
//
// Its functions take and return plain values and keep no state, so they
// are safe for concurrent use. It may import fts and the standard library
// only; engine imports it, never the reverse.
package search
