//go:build invariants

package kronos

// invariantsOn makes every mutating call verify the whole graph afterwards
// (go test -tags invariants). Far too slow for production.
const invariantsOn = true
