//go:build !invariants

package dqlexec

// invariantsBuild is set in -tags invariants builds, where the engine checks
// itself after every step and large loads are too slow.
const invariantsBuild = false
