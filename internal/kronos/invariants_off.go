//go:build !invariants

package kronos

const invariantsOn = false
