//go:build invariants

package rdf

// invariantsOn makes every parsed line check that the quad renders to a line
// that parses back to an equal quad (go test -tags invariants).
const invariantsOn = true
