// Package chunk splits long texts into overlapping pieces of bounded token
// count, the units cairn embeds and searches.
//
// Token estimate (documented so every part of cairn counts alike, and
// deliberately independent of any embedding model, which engine must not
// import): a text is scanned into runs; every maximal run of letters and
// digits (and '_') counts 1 token for its first 6 runes plus 1 per further
// started group of 4 (close to WordPiece on English prose and code
// identifiers); every other
// non-space rune (punctuation, symbols, CJK ideographs are letters) counts 1;
// white space counts 0. For English prose this lands within about 15% of
// BERT WordPiece counts; for code it overestimates slightly, which is the safe
// side for a model input limit.
//
// Split fills each chunk up to the budget and cuts at the strongest break
// inside it (a blank line, then a line break, then any white space), falling back to a hard cut inside a run only when one run
// alone exceeds the budget; chunks overlap by about Options.Overlap tokens.
// Chunks are byte ranges of the input, so a hit maps back to its message
// and position exactly.
//
// Everything here is pure and safe for concurrent use. It imports nothing
// from the project.
package chunk
