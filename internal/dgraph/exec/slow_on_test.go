//go:build invariants || race

package exec

// slowBuild is set in -tags invariants builds, where the engine checks
// itself after every step, and in -race builds: large loads are too slow
// there, and the tests take smaller samples of the film data.
const slowBuild = true
