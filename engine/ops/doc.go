// Package ops holds operations that agents' hooks and maintenance run on
// an open engine: today the recall that puts stored memory into an
// agent's context (a session-start briefing and a per-prompt search
// within a token budget, each line marked when its breadcrumbs went
// stale) and the per-session record of what was already recalled, so
// that nothing is recalled twice in a session.
//
// Recall reads only through the engine's API: the search it runs is
// Engine.Search, so whatever relevance floor and ranking the search
// applies, recall applies too. A per-prompt recall also passes the
// search's results through the prompt gate of engine/search, and injects
// nothing when they hold too little of the prompt for their relevance. SessionLog keeps its files in a directory
// it is given (the data dir's recall-sessions); each file is small,
// written to a temporary file and renamed, and losing one only means a
// message may be recalled again.
//
// Functions are safe for concurrent use on different sessions; two
// processes recording the same session at once may lose one's ids (a
// repeat, never an error). ops imports engine and engine/search only: no
// store, no database/sql, no net/http, nothing of cmd.
package ops
