//go:build race

package bulk_test

// raceEnabled shrinks the film comparison under the race detector, which
// slows it tenfold; the plain run keeps the full size.
const raceEnabled = true
