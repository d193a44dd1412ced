package gatekeeper

import "github.com/weft-db/weft/internal/vclock"

// ChooseReadPoint picks the read point a read may be stamped with, given
// every gatekeeper's offered point (points[k], nil when k has nothing in
// flight; see Core.ReadPoint) and the clock of every gatekeeper's newest
// handed-off transaction (handed[k], nil when it has handed off none). A
// point may be used only if it follows every one of those transactions as
// a whole vector clock; among those, one before every gatekeeper's oldest
// transaction in flight waits for none of them and is preferred. nil: none
// may be used (the read then takes a fresh stamp). The caller must load
// handed after points, so that a hand-off that made a point stale is seen.
//
// Why whole clocks (docs/simulation.md, "Read points"): a point that only
// matches gatekeeper k's own counter of its newest hand-off T may still be
// concurrent with T — its gatekeeper merged the other entries at other
// moments than k did — and Kronos may then order it before T (through a
// transaction in flight that it precedes and that was ordered before T),
// so a read that began after T was acknowledged would miss T. A point that
// dominates T's clock follows T on every shard, whatever Kronos holds.
func ChooseReadPoint(points []*vclock.Stamp, handed []*vclock.Clock) *vclock.Stamp {
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

// covers reports whether p follows (or equals) every handed-off clock.
func covers(p *vclock.Stamp, handed []*vclock.Clock) bool {
	for _, h := range handed {
		if h != nil && !vclock.LessEq(*h, p.Clock) {
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
