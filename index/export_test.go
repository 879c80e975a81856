package index

// RaceEnabled reports whether the race detector is on, for black-box tests.
const RaceEnabled = raceEnabled
