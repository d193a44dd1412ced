//go:build !invariants

package engine

const invariantsBuild = false
