package monitor

import (
	"errors"
	"fmt"
)

var (
	// ErrSpec is wrapped by every error about a predicate specification.
	ErrSpec = errors.New("monitor: invalid predicate spec")
	// ErrOverloaded means a bounded queue is full (a server's candidate queue
	// at QueueMax, or ViolationsMax violations not yet taken with Advance).
	// Nothing was changed; the caller may retry after draining.
	ErrOverloaded = errors.New("monitor: overloaded")
	// ErrCandidate is wrapped by errors about a malformed or misrouted
	// candidate (unknown server, wrong number of values, wrong ε).
	ErrCandidate = errors.New("monitor: bad candidate")
	// ErrOutOfOrder means a server's candidates did not arrive in their
	// sequence order; the monitor needs per-server FIFO delivery.
	ErrOutOfOrder = errors.New("monitor: candidate out of order")
	// ErrClockRegressed means a detector was given an event stamp that is not
	// after the previous one on its server.
	ErrClockRegressed = errors.New("monitor: event clock not after the previous event")
)

// assert panics on a programmer error (a broken internal invariant).
func assert(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Sprintf("monitor: assertion failed: "+format, args...))
	}
}
