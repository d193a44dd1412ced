//go:build !invariants

package dql

const invariantsOn = false
