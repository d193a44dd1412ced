//go:build !invariants

package kv

const invariantsOn = false
