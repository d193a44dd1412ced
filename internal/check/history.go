package check

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Type is an operation's type: an invocation or one of the three outcomes.
type Type string

// Operation types, as Jepsen and Elle spell them.
const (
	Invoke Type = "invoke" // the client sent the request
	OK     Type = "ok"     // it happened
	Fail   Type = "fail"   // it definitely did not happen
	Info   Type = "info"   // indeterminate: it may or may not have happened
)

// Nemesis is the Process of fault-injection operations (Jepsen's :nemesis).
// Checkers skip them.
const Nemesis = -1

// Function names the checkers look for in Op.F.
const (
	FTxn      = "txn"      // value Txn (list-append, rw-register, sideband)
	FRead     = "read"     // value nil at invocation; map[int64]int64 (bank, ring) or []int64 (set-full)
	FTransfer = "transfer" // value Transfer (bank)
	FAdd      = "add"      // value int64, the element (set-full)
)

// Op is one history entry in Jepsen's format. Value is one of nil, int64,
// []int64, map[int64]int64, Transfer or Txn; the JSON reader produces exactly
// these types and the checkers accept no others.
type Op struct {
	Index   int    // position in the recorded history (informational)
	Process int    // client (logical process); Nemesis for fault ops
	Type    Type   // Invoke, OK, Fail or Info
	F       string // function, e.g. FTxn
	Value   any    // payload; for an invocation the reads are still nil
	Time    int64  // nanoseconds, informational: real-time order is history order
	// After, when set, is the Index of an operation that this one follows
	// through a channel outside the database (sideband workload).
	After *int
}

// History is a sequence of operations in real-time order: an operation
// precedes every operation recorded after it. Checkers derive real-time
// precedence from positions in the slice, as Jepsen does, never from Time.
type History []Op

// Transfer is a bank transfer's value.
type Transfer struct {
	From, To, Amount int64
}

// Mop is a micro-operation of a transaction: ["append", k, v], ["w", k, v]
// or ["r", k, value].
type Mop struct {
	F   string // MopAppend, MopWrite or MopRead
	Key int64
	// Value is the appended or written value, or for a register read the
	// value read (unless Nil).
	Value int64
	// List is a list read's value (unless Nil). A non-nil List marks a list
	// read; use ReadList, which maps a nil list to Nil.
	List []int64
	// Nil marks a read that returned nil: not yet known in an invocation;
	// in a completion, the initial state (register) or the empty list.
	Nil bool
}

// Micro-operation names.
const (
	MopAppend = "append"
	MopWrite  = "w"
	MopRead   = "r"
)

// Txn is a transaction: micro-operations executed in order.
type Txn []Mop

// Append returns ["append", k, v].
func Append(k, v int64) Mop { return Mop{F: MopAppend, Key: k, Value: v} }

// Write returns ["w", k, v].
func Write(k, v int64) Mop { return Mop{F: MopWrite, Key: k, Value: v} }

// ReadList returns ["r", k, l]; a nil l is a nil read (unknown, or empty).
func ReadList(k int64, l []int64) Mop {
	if l == nil {
		return Mop{F: MopRead, Key: k, Nil: true}
	}
	return Mop{F: MopRead, Key: k, List: l}
}

// ReadReg returns ["r", k, v], a register read that returned v.
func ReadReg(k, v int64) Mop { return Mop{F: MopRead, Key: k, Value: v} }

// ReadNil returns ["r", k, nil].
func ReadNil(k int64) Mop { return Mop{F: MopRead, Key: k, Nil: true} }

// Pair is an invocation with its completion.
type Pair struct {
	Invoke   Op // the invocation
	Complete Op // the completion; the zero Op when none was recorded
	// InvokePos and CompletePos are positions in the history. CompletePos is
	// -1 when the history ended before a completion: the pair is then Info.
	InvokePos, CompletePos int
}

// Type is the pair's outcome: OK, Fail or Info.
func (p Pair) Type() Type {
	if p.CompletePos < 0 {
		return Info
	}
	return p.Complete.Type
}

// Value is what the operation did: the completion's value if it is OK (reads
// filled in), otherwise the invocation's.
func (p Pair) Value() any {
	if p.Type() == OK {
		return p.Complete.Value
	}
	return p.Invoke.Value
}

// Before reports whether p completed (OK) before q was invoked. Under strict
// serializability p then precedes q. Fail and Info pairs precede nothing.
func (p Pair) Before(q Pair) bool {
	return p.Type() == OK && p.CompletePos < q.InvokePos
}

// String names the pair by process and history indexes for reports.
func (p Pair) String() string {
	if p.CompletePos < 0 {
		return fmt.Sprintf("process %d, index %d (never completed)", p.Invoke.Process, p.Invoke.Index)
	}
	return fmt.Sprintf("process %d, index %d-%d (%s)", p.Invoke.Process, p.Invoke.Index, p.Complete.Index, p.Type())
}

// ErrMalformed is wrapped by every error about a history that breaks the
// format's rules (as opposed to an anomaly of the database under test).
var ErrMalformed = errors.New("check: malformed history")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// Pairs matches every invocation with the next completion of its process, in
// invocation order. An invocation with no completion by the end of the
// history is Info. Nemesis operations are skipped. A completion without an
// invocation, a second invocation while one is pending, or a completion whose
// F differs from its invocation's is an ErrMalformed error.
func Pairs(h History) ([]Pair, error) {
	pending := make(map[int]int) // process → index into out
	out := make([]Pair, 0, len(h)/2+1)
	for pos, op := range h {
		if op.Process == Nemesis {
			continue
		}
		switch op.Type {
		case Invoke:
			if i, ok := pending[op.Process]; ok {
				return nil, malformed("position %d: process %d invoked again while position %d is pending",
					pos, op.Process, out[i].InvokePos)
			}
			pending[op.Process] = len(out)
			out = append(out, Pair{Invoke: op, InvokePos: pos, CompletePos: -1})
		case OK, Fail, Info:
			i, ok := pending[op.Process]
			if !ok {
				return nil, malformed("position %d: process %d completed with nothing pending", pos, op.Process)
			}
			if out[i].Invoke.F != op.F {
				return nil, malformed("position %d: completion f %q, invocation f %q", pos, op.F, out[i].Invoke.F)
			}
			out[i].Complete, out[i].CompletePos = op, pos
			delete(pending, op.Process)
		default:
			return nil, malformed("position %d: unknown type %q", pos, op.Type)
		}
	}
	return out, nil
}

// Recorder builds a History as operations happen. Record an invocation just
// before sending the request and a completion just after the reply: history
// order is the real-time order the checkers use. It is safe for concurrent
// use.
type Recorder struct {
	mu sync.Mutex
	h  History
}

// Record appends op with Index set to its position and returns that index.
func (r *Recorder) Record(op Op) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	op.Index = len(r.h)
	r.h = append(r.h, op)
	return op.Index
}

// Invoke records an invocation and returns its index.
func (r *Recorder) Invoke(process int, f string, value any, time int64) int {
	return r.Record(Op{Process: process, Type: Invoke, F: f, Value: value, Time: time})
}

// Complete records a completion (OK, Fail or Info) and returns its index.
func (r *Recorder) Complete(process int, t Type, f string, value any, time int64) int {
	return r.Record(Op{Process: process, Type: t, F: f, Value: value, Time: time})
}

// History returns a copy of the operations recorded so far.
func (r *Recorder) History() History {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.h)
}

// Ref returns a pointer to i, for Op.After.
func Ref(i int) *int { return &i }
