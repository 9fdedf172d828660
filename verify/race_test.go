//go:build race

package verify

// raceEnabled trims the bit-flip campaigns under the race detector, which
// makes each verify several times slower (CI runs every test with it).
const raceEnabled = true
