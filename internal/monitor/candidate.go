package monitor

import (
	"fmt"

	"github.com/weft-db/weft/internal/vclock"
)

// Candidate is what a server's detector sends a monitor (§V): one local state
// of the server, as the HVC interval [Start, End) between the relevant PUT
// that began it and the one that ended it, and the values of the predicate's
// keys on that server during it (in Spec.Keys order).
//
// A monitor keeps the candidate: neither the HVCs nor Values may be modified
// after it is sent.
type Candidate struct {
	Server int
	// Seq numbers the server's states for this predicate: 0 is the state
	// before the first relevant PUT, and each relevant PUT (or Flush) begins
	// the next. Candidates of one server reach a monitor in Seq order, with
	// gaps where a state was not worth sending.
	Seq    uint64
	Start  vclock.HVC
	End    vclock.HVC
	Values []string
}

func (c Candidate) String() string {
	return fmt.Sprintf("s%d#%d[%d,%d)%q", c.Server, c.Seq, c.Start.Own(), c.End.Own(), c.Values)
}

// Outbound is a candidate addressed to the monitor of one predicate (its
// index in the Spec).
type Outbound struct {
	Predicate int
	Candidate Candidate
}

// Precedes reports whether candidate a happened before candidate b under the
// paper's interval rule (§V, Fig. 6): a's interval ends before b's begins in
// HVC order (a.End < b.Start), and a.End[a's server] ≤ b.Start[b's server] − ε.
// If the HVCs are ordered but the owners' times are within ε, the intervals
// may still have overlapped in real time; that uncertain case, and every
// other, counts as concurrent, so a monitor never misses a violation for want
// of ordering (it may report one that a perfect clock would rule out).
//
// Precedes is monotone along a server's states, which the detection
// algorithms rely on: if a precedes b, it precedes every later state of b's
// server, and every earlier state of a's server precedes b.
func Precedes(a, b *Candidate, eps uint64) bool { return precedesStart(a, b.Start, eps) }

// precedesStart is Precedes against anything starting at start.
func precedesStart(a *Candidate, start vclock.HVC, eps uint64) bool {
	if eps == vclock.EpsilonInfinite {
		return false
	}
	end, st := a.End.Own(), start.Own()
	if st < eps || end > st-eps {
		return false
	}
	return vclock.CompareHVC(a.End, start) == vclock.Before
}
