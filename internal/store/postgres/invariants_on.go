//go:build invariants

package postgres

import "fmt"

// invariantsOn makes the store check what the server hands back: scan pages
// in order and in range, and commit versions above every member's snapshot
// (go test -tags invariants).
const invariantsOn = true

func assert(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Sprintf("store/postgres: invariant broken: "+format, args...))
	}
}
