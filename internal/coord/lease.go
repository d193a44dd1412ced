package coord

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Leases (docs/cluster.md, "Leases"). A member serves reads and commits only
// inside a lease granted by the coordinator's serving leader, and the
// coordinator takes a slot from its holder only once the holder's lease has
// certainly expired. Times here are instants on one process's monotonic
// clock, as durations since an origin of that clock: the member's clock for
// a Lease, the coordinator's for a LeaseRule. Nothing here reads a clock;
// the shells (RunMember, Node, the simulation) pass the time in.
//
// The argument, with real time r(·):
//
//   - a member sends a heartbeat at its instant s and is granted d = Lease;
//     it serves only while its clock reads less than s + d;
//   - the leader answers only after raft confirmed it still leads, and
//     records the grant at its own instant g, taken after it received the
//     heartbeat: r(g) > r(s);
//   - the leader proposes the Fail that gives the slot away only at an
//     instant f with f >= g + Lease + MaxDrift, and grants the member
//     nothing more once it decided to (condemned);
//   - MaxDrift bounds how much the two clocks' measures of one interval
//     (of up to SuspectAfter) may differ, summed over both clocks' error.
//
// So the member's last serving instant is before r(s) + Lease + (the
// member clock's error), and the Fail, hence the new epoch, hence the new
// holder's first answer, after r(g) + Lease + MaxDrift - (the leader
// clock's error) > r(s) + Lease + (the member clock's error). A leader
// newly elected does not know its predecessor's grants; every grant its
// predecessor confirmed was for a heartbeat sent before a quorum moved to
// the new term, so before the new leader's election: it assumes a grant to
// every live member at the instant it starts serving.

// ErrLeaseExpired is the retryable refusal of a member whose lease lapsed:
// it neither reads nor commits until the coordinator renews the lease (or
// fences it, and it registers again).
var ErrLeaseExpired = errors.New("coord: lease expired")

// Lease defaults: the lease is well below the default SuspectAfter (1s), so
// a replacement waits for nothing but the failure detector; the drift bound
// is far above what monotonic clocks drift over a second (a few µs), to
// cover a VM's clock stepping as well.
const (
	DefaultLease    = 500 * time.Millisecond
	DefaultMaxDrift = 100 * time.Millisecond
)

// Lease is what a member holds: granted for Duration from Start, the
// member's instant when it sent the heartbeat the grant answered (so the
// network's delay only shortens it). The zero Lease lets nothing be served.
type Lease struct {
	Start, Duration time.Duration
}

// Expiry is the first instant at which the lease no longer holds.
func (l Lease) Expiry() time.Duration { return l.Start + l.Duration }

// Valid reports whether a member holding l may serve at its instant now.
func (l Lease) Valid(now time.Duration) bool {
	return l.Duration > 0 && now >= l.Start && now < l.Expiry()
}

// Renew returns the lease after a grant of d to a heartbeat sent at sent.
// The later expiry wins: an answer to an older heartbeat arriving late
// never shortens the lease. A zero grant changes nothing (the lease runs
// out on its own).
func (l Lease) Renew(sent, d time.Duration) Lease {
	if d <= 0 {
		return l
	}
	n := Lease{Start: sent, Duration: d}
	if l.Duration > 0 && l.Expiry() >= n.Expiry() {
		return l
	}
	return n
}

// LeaseRule is the coordinator's side: the lease it grants and the clock
// drift it allows for.
type LeaseRule struct {
	// Lease is the lease granted with each confirmed heartbeat.
	Lease time.Duration
	// MaxDrift bounds, over one interval of up to SuspectAfter, the sum of
	// the member's and the coordinator's clock errors.
	MaxDrift time.Duration
}

// DefaultLeaseRule returns the documented defaults.
func DefaultLeaseRule() LeaseRule { return LeaseRule{Lease: DefaultLease, MaxDrift: DefaultMaxDrift} }

// Validate checks the rule against the failure detector's SuspectAfter: a
// silent member's lease must have expired by the time it is suspected, so
// the lease never delays a replacement.
func (r LeaseRule) Validate(suspectAfter time.Duration) error {
	switch {
	case r.Lease <= 0 || r.MaxDrift < 0:
		return fmt.Errorf("coord: Lease %v must be positive and MaxDrift %v not negative", r.Lease, r.MaxDrift)
	case r.Lease+r.MaxDrift >= suspectAfter:
		return fmt.Errorf("coord: Lease %v + MaxDrift %v must stay below SuspectAfter %v", r.Lease, r.MaxDrift, suspectAfter)
	}
	return nil
}

// ReplaceAt is the first instant (the coordinator's clock) at which a member
// whose last grant was recorded at lastGrant may be replaced.
func (r LeaseRule) ReplaceAt(lastGrant time.Duration) time.Duration {
	return lastGrant + r.Lease + r.MaxDrift
}

// MayReplace reports whether, at now, the lease of a member last granted at
// lastGrant has certainly expired.
func (r LeaseRule) MayReplace(lastGrant, now time.Duration) bool {
	return now >= r.ReplaceAt(lastGrant)
}

// LeaseState is a member's lease as its process shares it: RunMember renews
// it from the heartbeats' answers, and the member's engines ask it before
// they serve. Its clock is injected (a process passes its monotonic clock,
// the simulation its member's drifting one). Safe for concurrent use.
type LeaseState struct {
	now func() time.Duration

	mu     sync.Mutex
	lease  Lease
	fenced bool

	refusals, renewals atomic.Uint64

	// ignoreExpiry is a planted bug (tests and `weft faults` only): the
	// member serves on after its lease lapsed.
	ignoreExpiry bool
}

// NewLeaseState returns a member's lease (none yet) over the clock now.
func NewLeaseState(now func() time.Duration) *LeaseState { return &LeaseState{now: now} }

// ProcessClock returns a monotonic clock for NewLeaseState: the time since
// the call.
func ProcessClock() func() time.Duration {
	origin := time.Now()
	return func() time.Duration { return time.Since(origin) }
}

// Now reads the lease's clock.
func (s *LeaseState) Now() time.Duration { return s.now() }

// Granted records a grant of d to a heartbeat sent at sent (an instant of
// this lease's clock).
func (s *LeaseState) Granted(sent, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fenced || d <= 0 {
		return
	}
	s.lease = s.lease.Renew(sent, d)
	s.renewals.Add(1)
}

// Fence ends the lease for good: the member was declared failed.
func (s *LeaseState) Fence() {
	s.mu.Lock()
	s.fenced, s.lease = true, Lease{}
	s.mu.Unlock()
}

// Current returns the lease held.
func (s *LeaseState) Current() Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lease
}

// MayServe reports whether the member may serve now.
func (s *LeaseState) MayServe() bool { return s.MayServeAt(s.now()) }

// MayServeAt reports whether the member may serve at its instant now.
func (s *LeaseState) MayServeAt(now time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ignoreExpiry && !s.fenced && s.lease.Duration > 0 {
		return true // the planted bug
	}
	return !s.fenced && s.lease.Valid(now)
}

// Check returns nil if the member may serve now, else ErrLeaseExpired
// (counted as a refusal).
func (s *LeaseState) Check() error {
	if s.MayServe() {
		return nil
	}
	s.refusals.Add(1)
	return ErrLeaseExpired
}

// Refusals counts the Checks that refused; Renewals the grants recorded.
func (s *LeaseState) Refusals() uint64 { return s.refusals.Load() }

// Renewals counts the grants recorded.
func (s *LeaseState) Renewals() uint64 { return s.renewals.Load() }

// PlantIgnoreExpiry makes the member serve on after its lease lapsed (a
// planted bug: the simulation and the real-process tests must catch it).
func (s *LeaseState) PlantIgnoreExpiry() {
	s.mu.Lock()
	s.ignoreExpiry = true
	s.mu.Unlock()
}
