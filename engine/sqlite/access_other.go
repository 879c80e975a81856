//go:build !unix

package sqlite

// Writable cannot be known without writing here: dirs are taken as
// writable, and a failing write says otherwise.
func Writable(string) bool { return true }
