//go:build race

package kv

// raceEnabled shrinks the simulations under the race detector, which slows
// them tenfold; the plain and invariants runs keep the full size.
const raceEnabled = true
