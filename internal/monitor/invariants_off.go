//go:build !invariants

package monitor

const invariantsOn = false
