//go:build race

package main

// raceEnabled trims the largest inputs of the slowest tests under the race
// detector, which makes every command several times slower (CI runs it).
const raceEnabled = true
