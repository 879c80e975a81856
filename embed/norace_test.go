//go:build !race

package embed_test

const raceEnabled = false
