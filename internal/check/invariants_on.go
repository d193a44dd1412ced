//go:build invariants

package check

// invariantsOn makes the checkers verify their own work as they go (go test
// -tags invariants): every reported cycle is a cycle of the graph with the
// labels it names, and every real-time reduction preserves reachability.
// Costly on large histories.
const invariantsOn = true
