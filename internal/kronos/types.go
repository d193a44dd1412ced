package kronos

import (
	"errors"
	"fmt"

	"github.com/weft-db/weft/internal/vclock"
)

// EventID names an event. Ids start at 1, increase and are never reused.
type EventID = uint64

// Order is the relation between the two events of a pair.
type Order int8

const (
	// Concurrent: no order is known; a later AssignOrder may set one.
	Concurrent Order = iota
	// Before: the first event happens before the second (a → b).
	Before
	// After: the second event happens before the first (b → a).
	After
	// Unknown: one of the events does not exist (never created, or collected).
	Unknown
)

func (o Order) String() string {
	switch o {
	case Concurrent:
		return "concurrent"
	case Before:
		return "before"
	case After:
		return "after"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("Order(%d)", int8(o))
}

// Reverse swaps the roles of the two events.
func (o Order) Reverse() Order {
	switch o {
	case Before:
		return After
	case After:
		return Before
	}
	return o
}

// Strength says what to do when a requested order contradicts the graph.
type Strength int8

const (
	// Must aborts the whole batch on a contradiction.
	Must Strength = iota + 1
	// Prefer accepts the existing, reversed order and reports it.
	Prefer
)

// Clock names an event by the vector timestamp a gatekeeper stamped.
type Clock struct {
	vclock.Clock
	// Owner is the gatekeeper that stamped the clock: Counters[Owner] is its own counter.
	Owner uint32
}

// Ref names an event by id, or by clock when Clock is non-nil.
type Ref struct {
	ID    EventID
	Clock *Clock
}

// ID returns a Ref naming event id.
func ID(id EventID) Ref { return Ref{ID: id} }

// ClockRef returns a Ref naming the event stamped by gatekeeper owner at c.
func ClockRef(owner uint32, c vclock.Clock) Ref {
	return Ref{Clock: &Clock{Clock: c, Owner: owner}}
}

func (r Ref) String() string {
	if r.Clock != nil {
		return fmt.Sprintf("gk%d@%s", r.Clock.Owner, r.Clock.Clock)
	}
	return fmt.Sprintf("#%d", r.ID)
}

// Pair asks for the order of A relative to B.
type Pair struct{ A, B Ref }

// Assignment requests A → B (Order Before) or B → A (Order After).
type Assignment struct {
	A        Ref
	Order    Order
	B        Ref
	Strength Strength
}

// AssignResult is the resulting order of one pair of an AssignOrder batch.
type AssignResult struct {
	Order    Order
	Reversed bool // a Prefer that was contradicted by the graph
}

// Operating errors. They are stable: the service maps each to a wire code.
var (
	ErrUnknownEvent = errors.New("kronos: unknown event")
	ErrSelfOrder    = errors.New("kronos: pair names the same event twice")
	ErrMalformed    = errors.New("kronos: malformed request")
	ErrUnderflow    = errors.New("kronos: reference count underflow")
	ErrOverflow     = errors.New("kronos: count overflow")
	ErrMustConflict = errors.New("kronos: must order contradicts the graph")
	ErrCollected    = errors.New("kronos: clock below the cleanup watermark")
	ErrClockInvalid = errors.New("kronos: clock contradicts its gatekeeper's chain")
	ErrClockEvent   = errors.New("kronos: clock events are referenced by their chain; use cleanup")
)

// ConflictError reports the must pair that aborted an AssignOrder batch.
type ConflictError struct {
	Index  int   // index of the pair in the request
	Actual Order // the order the graph holds for (A, B)
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("kronos: must order of pair %d contradicts the graph, which holds %s", e.Index, e.Actual)
}

// Unwrap lets errors.Is(err, ErrMustConflict) match.
func (e *ConflictError) Unwrap() error { return ErrMustConflict }
