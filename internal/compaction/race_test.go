//go:build race

package compaction

// raceEnabled trims the heaviest randomized tests under the race detector, which
// slows them ~10x; the full runs happen in the ordinary test pass.
const raceEnabled = true
