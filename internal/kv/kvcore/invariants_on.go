//go:build invariants

package kvcore

// invariantsOn makes Apply check the sibling list it returns (pairwise
// concurrent, canonical order) and NewRing its token order (go test -tags
// invariants).
const invariantsOn = true
