//go:build !invariants

package schema

const invariantsOn = false
