//go:build !invariants

package check

const invariantsOn = false
