package gatekeeper

import "github.com/weft-db/weft/internal/vclock"

// ChooseReadPoint picks the read point a read may be stamped with, given
// every gatekeeper's offered point (points[k], nil when k has nothing in
// flight; see Core.ReadPoint) and every gatekeeper's newest handed-off own
// counter (handed[k]). A point may be used only if it covers every
// hand-off; among those, one before every gatekeeper's oldest transaction
// in flight waits for none of them and is preferred. nil: none may be used
// (the read then takes a fresh stamp). The caller must read handed after
// points, so that a hand-off that made a point stale is seen.
func ChooseReadPoint(points []*vclock.Stamp, handed []uint64) *vclock.Stamp {
	var usable *vclock.Stamp
	for _, p := range points {
		if p == nil || !covers(p, handed) {
			continue
		}
		if precedesInflight(p, points) {
			return p
		}
		if usable == nil {
			usable = p
		}
	}
	return usable
}

// covers reports whether p's entry for each gatekeeper is at least that
// gatekeeper's newest handed-off transaction.
func covers(p *vclock.Stamp, handed []uint64) bool {
	for k, h := range handed {
		if h > p.Clock.Counters[k] {
			return false
		}
	}
	return true
}

// precedesInflight reports whether p is before every gatekeeper's oldest
// transaction in flight, whose counter is one more than that gatekeeper's
// point's own entry.
func precedesInflight(p *vclock.Stamp, points []*vclock.Stamp) bool {
	for k, q := range points {
		if q != nil && p.Clock.Counters[k] > q.Clock.Counters[k] {
			return false
		}
	}
	return true
}
