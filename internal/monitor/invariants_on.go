//go:build invariants

package monitor

// invariantsOn makes every Monitor.Step verify the monitor's whole state
// afterwards (go test -tags invariants). Far too slow for production.
const invariantsOn = true
