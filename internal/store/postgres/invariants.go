package postgres

import (
	"fmt"

	"github.com/weft-db/weft/internal/invariants"
)

// checkPage asserts that a scan page is strictly increasing and inside
// [cursor, sp.End).
func checkPage(rows []row, cursor string, sp span) {
	if !invariants.On {
		return
	}
	prev := ""
	for i, r := range rows {
		k := string(r.k)
		assert(k >= cursor && sp.Has(k), "scan row %q outside [%q, %q)", k, cursor, sp.End)
		assert(i == 0 || k > prev, "scan rows out of order: %q after %q", k, prev)
		prev = k
	}
}

// checkVersion asserts that a group's commit version is above the snapshot
// of every member it commits: each was validated against later versions.
func checkVersion(ver int64, group []*request, results []error) {
	if !invariants.On {
		return
	}
	for i, r := range group {
		assert(results[i] != nil || r.t.snap < ver, "commit version %d not above snapshot %d", ver, r.t.snap)
		assert(r.t.floor <= r.t.snap, "snapshot %d below its own floor %d", r.t.snap, r.t.floor)
	}
}

// assert panics with the message when ok is false. Only the checks above,
// guarded by invariants.On, call it.
func assert(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Sprintf("store/postgres: invariant broken: "+format, args...))
	}
}
