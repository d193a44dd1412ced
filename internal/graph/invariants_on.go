//go:build invariants

package graph

// invariantsOn makes every write and Collect verify the whole graph afterwards
// (go test -tags invariants). Far too slow for production.
const invariantsOn = true
