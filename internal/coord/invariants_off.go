//go:build !invariants

package coord

const invariantsOn = false
