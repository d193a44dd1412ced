//go:build race

package kronos

// raceEnabled shortens the property tests' sequences under the race
// detector, which slows them about tenfold.
const raceEnabled = true
