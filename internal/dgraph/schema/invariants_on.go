//go:build invariants

package schema

// invariantsOn makes Parse and every alter re-check the whole schema,
// including that its canonical text parses back to it (go test -tags
// invariants).
const invariantsOn = true
