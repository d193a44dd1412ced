// Package invariants is the module's one switch for self-checks: On is true
// in builds with the invariants tag (go test -tags invariants) and false
// otherwise. A package guards its costly checks with `if invariants.On`;
// On is a constant, so in a plain build the compiler drops the guarded code
// and the checks cost nothing. What each package checks is written in its
// own doc.go.
//
// The package holds no state and is safe for concurrent use.
package invariants
