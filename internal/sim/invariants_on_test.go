//go:build invariants

package sim

// invariantsBuild shortens the simulation under -tags invariants, where
// Kronos verifies its whole graph after its operations.
const invariantsBuild = true
