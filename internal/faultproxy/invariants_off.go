//go:build !invariants

package faultproxy

const invariantsOn = false
