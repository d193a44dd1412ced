//go:build !invariants

package sim

const invariantsBuild = false
