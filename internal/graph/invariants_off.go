//go:build !invariants

package graph

const invariantsOn = false
