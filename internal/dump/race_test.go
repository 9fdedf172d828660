//go:build race

package dump

// raceEnabled trims the slowest comparisons under the race detector,
// which makes them ten times slower; the parallel paths still run.
const raceEnabled = true
