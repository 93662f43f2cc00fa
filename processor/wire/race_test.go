//go:build race

package wire

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts that rely on a pool do not hold.
const raceEnabled = true
