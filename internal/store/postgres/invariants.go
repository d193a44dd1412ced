package postgres

// checkPage asserts that a scan page is strictly increasing and inside
// [cursor, sp.End).
func checkPage(rows []row, cursor string, sp span) {
	if !invariantsOn {
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
	if !invariantsOn {
		return
	}
	for i, r := range group {
		assert(results[i] != nil || r.t.snap < ver, "commit version %d not above snapshot %d", ver, r.t.snap)
		assert(r.t.floor <= r.t.snap, "snapshot %d below its own floor %d", r.t.snap, r.t.floor)
	}
}
