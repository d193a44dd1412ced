package bench

import "math/rand/v2"

// NewRand returns the suite's seeded generator for one purpose (stream), so
// adding a draw to one workload does not shift another's.
func NewRand(seed uint64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}
