//go:build race

package index

// raceEnabled shrinks randomized tests under the race detector, which
// slows the pure-Go paths about tenfold.
const raceEnabled = true
