package gatekeeper

import (
	"testing"

	"github.com/weft-db/weft/internal/vclock"
)

func stampOf(owner uint32, counters ...uint64) *vclock.Stamp {
	return &vclock.Stamp{Clock: vclock.Clock{Epoch: 1, Counters: counters}, Owner: owner}
}

func clockOf(counters ...uint64) *vclock.Clock {
	return &vclock.Clock{Epoch: 1, Counters: counters}
}

// TestChooseReadPoint: a point is used only when it follows every
// gatekeeper's newest hand-off as a whole clock; one before everything in
// flight is preferred.
func TestChooseReadPoint(t *testing.T) {
	for _, tc := range []struct {
		name   string
		points []*vclock.Stamp
		handed []*vclock.Clock
		want   int // index into points; -1: none
	}{
		{"nothing in flight", []*vclock.Stamp{nil, nil}, []*vclock.Clock{clockOf(1, 0), nil}, -1},
		{"nothing handed off", []*vclock.Stamp{stampOf(0, 1, 0), nil}, []*vclock.Clock{nil, nil}, 0},
		{"covers every hand-off", []*vclock.Stamp{stampOf(0, 3, 2), nil}, []*vclock.Clock{clockOf(2, 1), clockOf(1, 2)}, 0},
		{"another gatekeeper's newer hand-off", []*vclock.Stamp{stampOf(0, 3, 1), nil}, []*vclock.Clock{nil, clockOf(1, 2)}, -1},
		// The clocks of TestReadPointAfterPartialSync (engine): gatekeepers
		// A=0, C=1, B=2; the point P matches B's hand-off T on B's own
		// counter but is behind it on C's: concurrent, not usable.
		{"own counter matches, clock concurrent", []*vclock.Stamp{stampOf(0, 3, 1, 2), nil, nil},
			[]*vclock.Clock{clockOf(1, 0, 0), nil, clockOf(2, 2, 2)}, -1},
		{"prefer the point before everything in flight",
			[]*vclock.Stamp{stampOf(0, 5, 4), stampOf(1, 4, 3)}, []*vclock.Clock{clockOf(4, 1), clockOf(1, 2)}, 1},
		{"else any usable point",
			[]*vclock.Stamp{stampOf(0, 5, 4), stampOf(1, 2, 3)}, []*vclock.Clock{clockOf(4, 1), clockOf(1, 3)}, 0},
	} {
		got := ChooseReadPoint(tc.points, tc.handed)
		switch {
		case tc.want < 0 && got != nil:
			t.Errorf("%s: chose %s, want none", tc.name, got)
		case tc.want >= 0 && got != tc.points[tc.want]:
			t.Errorf("%s: chose %v, want %s", tc.name, got, tc.points[tc.want])
		}
	}
}
