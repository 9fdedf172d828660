//go:build !race

package dump

const raceEnabled = false
