//go:build race

package racedetector

// Enabled reports that the binary was built with -race.
const Enabled = true
