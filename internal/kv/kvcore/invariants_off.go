//go:build !invariants

package kvcore

const invariantsOn = false
