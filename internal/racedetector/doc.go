// Package racedetector tells a test whether its binary was built with the
// race detector (go test -race), so that make test's race run can leave out
// the cases whose work happens in other processes (a Python or JS client, a
// browser, a cross build, a PostgreSQL server farm): the detector sees only
// the test's own process, and the plain run already covers them. Sizes are
// chosen with testing.Short, as usual; this is only for skipping.
//
// It imports nothing; tests only.
package racedetector
