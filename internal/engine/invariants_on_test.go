//go:build invariants

package engine

// invariantsBuild: graph and Kronos verify themselves after operations.
const invariantsBuild = true
