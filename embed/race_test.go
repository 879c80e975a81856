//go:build race

package embed_test

// raceEnabled: gomlx v0.26.0's simplego executor (hugot's pure-Go backend)
// has a data race in its parallel op scheduler (backends/simplego/exec.go:478
// against :430), outside cairn; the hugot cross-check runs in the normal
// (non-race) suite only.
const raceEnabled = true
