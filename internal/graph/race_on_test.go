//go:build race

package graph

// raceEnabled shortens the property tests and skips the memory measurement
// under the race detector, which slows them about tenfold.
const raceEnabled = true
