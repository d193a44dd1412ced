//go:build invariants

package dql

// invariantsOn makes every successful parse check that the canonical text
// of its result parses back to an equal tree and renders to itself (go test
// -tags invariants).
const invariantsOn = true
