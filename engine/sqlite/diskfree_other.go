//go:build !(linux || darwin)

package sqlite

// diskNearlyFull is unknown here: false.
func diskNearlyFull(string) bool { return false }

// diskAvailable is unknown here.
func diskAvailable(string) (uint64, bool) { return 0, false }
