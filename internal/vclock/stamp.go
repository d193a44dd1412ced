package vclock

import "fmt"

// Stamp is a refinable timestamp: the clock a gatekeeper stamped on a
// transaction, node program or NOP, and the gatekeeper (Owner) that stamped it.
// A gatekeeper ticks its own entry before every stamp, so two distinct stamps of
// one epoch never have equal clocks, and Counters[Owner] is the stamp's
// sequence number in its gatekeeper's FIFO order.
type Stamp struct {
	Clock Clock
	Owner uint32
}

// Seq is the owner's own counter: the stamp's position in its gatekeeper's order.
func (s Stamp) Seq() uint64 {
	if int(s.Owner) < len(s.Clock.Counters) {
		return s.Clock.Counters[s.Owner]
	}
	return 0
}

// IsZero reports the zero stamp (no clock at all), which precedes every stamp
// of a later epoch and is used for "never".
func (s Stamp) IsZero() bool { return s.Clock.Epoch == 0 && len(s.Clock.Counters) == 0 }

// CompareStamps compares the clocks of two stamps.
func CompareStamps(a, b Stamp) Relation { return Compare(a.Clock, b.Clock) }

func (s Stamp) String() string { return fmt.Sprintf("gk%d@%s", s.Owner, s.Clock) }
