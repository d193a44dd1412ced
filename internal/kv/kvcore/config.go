package kvcore

import (
	"fmt"
	"time"
)

// SiblingsLimit caps a replica's SiblingsMax (and what the decoder accepts).
const SiblingsLimit = 1024

// Quorum is what one request asks for (§II-B): the client sends to the
// key's N replicas and succeeds with R answers (GET) or W acknowledgements
// (PUT). W + R > N with W > N/2 gives sequential consistency; W + R ≤ N is
// eventual consistency: a GET may miss an acknowledged PUT.
type Quorum struct {
	// N is the replication factor: the length of the preference list. It is
	// the store's setting (servers and clients must agree); a request may
	// not change it. Default 3.
	N int
	// R is the answers a GET needs. Default 2.
	R int
	// W is the acknowledgements a PUT needs. Default 2.
	W int
	// Preferred is the first round's fan-out: the first Preferred replicas
	// of the preference list get the request at once; the rest only in the
	// second round. 0 means N (every replica at once, the paper's setup).
	Preferred int
	// RoundTicks is how many ticks a round waits for answers before the
	// second round starts (or, in the second round, before the request
	// fails). Default 50 (500 ms at the shell's 10 ms tick).
	RoundTicks int
	// ReadRepair makes a successful GET send the merged result to every
	// replica that answered with less. Default true.
	ReadRepair bool
}

// DefaultQuorum returns N=3, R=2, W=2 (sequential), both rounds of 50
// ticks, read repair on.
func DefaultQuorum() Quorum {
	return Quorum{N: 3, R: 2, W: 2, RoundTicks: 50, ReadRepair: true}
}

// Validate reports a setting that cannot work.
func (q Quorum) Validate() error {
	switch {
	case q.N < 1 || q.N > ServersMax:
		return fmt.Errorf("%w: N=%d not in [1, %d]", ErrInvalid, q.N, ServersMax)
	case q.R < 1 || q.R > q.N:
		return fmt.Errorf("%w: R=%d not in [1, N=%d]", ErrInvalid, q.R, q.N)
	case q.W < 1 || q.W > q.N:
		return fmt.Errorf("%w: W=%d not in [1, N=%d]", ErrInvalid, q.W, q.N)
	case q.Preferred < 0 || q.Preferred > q.N:
		return fmt.Errorf("%w: Preferred=%d not in [0, N=%d]", ErrInvalid, q.Preferred, q.N)
	case q.RoundTicks < 1:
		return fmt.Errorf("%w: RoundTicks=%d must be positive", ErrInvalid, q.RoundTicks)
	}
	return nil
}

// Sequential reports whether q gives sequential consistency (W + R > N and
// W > N/2); otherwise the store is only eventually consistent for it.
func (q Quorum) Sequential() bool { return q.W+q.R > q.N && 2*q.W > q.N }

// String is "N3R2W2".
func (q Quorum) String() string { return fmt.Sprintf("N%dR%dW%d", q.N, q.R, q.W) }

// TickDefault is the shells' tick: the unit of Quorum.RoundTicks.
const TickDefault = 10 * time.Millisecond
