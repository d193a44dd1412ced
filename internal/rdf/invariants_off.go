//go:build !invariants

package rdf

const invariantsOn = false
