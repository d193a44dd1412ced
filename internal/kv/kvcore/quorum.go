package kvcore

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/weft-db/weft/internal/vclock"
)

// Kind is a request's kind.
type Kind uint8

const (
	// KindGet reads a key's siblings.
	KindGet Kind = iota + 1
	// KindPut writes one sibling.
	KindPut
)

func (k Kind) String() string {
	switch k {
	case KindGet:
		return "get"
	case KindPut:
		return "put"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Send is a message an Op wants delivered to one replica.
type Send struct {
	To   int // server number
	Op   uint64
	Kind Kind
	Key  string
	// Sibling is the value a PUT writes.
	Sibling Sibling
	// Repair marks a read-repair PUT: fire and forget, the op is done.
	Repair bool
	// HVC is the clock the client carries (MergeHVC of what it has seen).
	HVC vclock.HVC
	// Round is the round (1 or 2) that sent it; the reply echoes it.
	Round int
}

// Reply is a replica's answer to a Send, fed back with Op.Step.
type Reply struct {
	From int
	Op   uint64
	// Err is nil on success; else the replica's error, or ErrUnavailable
	// (wrapped) when the shell could not reach it.
	Err      error
	Siblings []Sibling // GET
	Outcome  Outcome   // PUT
	HVC      vclock.HVC
	// Round echoes the Send's: a failure from round 1 that arrives after
	// round 2 asked the replica again does not cancel that second request.
	// 0 means unknown (the failure counts).
	Round int
}

// Result is a finished Op's answer.
type Result struct {
	Kind Kind
	// Siblings is a GET's merged answer (Merge of every counted reply):
	// empty if the key was never written.
	Siblings []Sibling
	// Version is the version a PUT wrote.
	Version Version
	// Acks counts the successful answers; Round is the round (1 or 2) in
	// which the quorum was reached or the op failed.
	Acks, Round int
	// HVC is the merge of the answers' clocks (for the session to carry).
	HVC vclock.HVC
	// Err is nil, or wraps ErrQuorum (and the first non-retryable replica
	// error, if any).
	Err error
}

type replicaState uint8

const (
	rsIdle replicaState = iota
	rsSent
	rsOK
	rsFailed // retryable: may be asked again in round 2
	rsRefused
)

// Op is one client request's quorum logic (§II-B), a pure state machine:
// the client sends to the key's replicas and waits for answers; if fewer
// than R (GET) or W (PUT) succeed within a round's timeout, it makes a
// second round to the replicas that have not succeeded; after that the
// request fails.
//
//   - Round 1 goes to the first Preferred replicas of the preference list
//     (all N by default).
//   - Round 2 starts when round 1 times out, or at once when its answers can
//     no longer make the quorum. It re-sends to every replica not yet
//     successful (unanswered, failed retryably, or not yet asked); a replica
//     that refused for good (ErrInvalid, ErrTooManySiblings,
//     ErrVersionReused) is not asked again.
//   - The op fails at round 2's timeout, or as soon as the answers still
//     possible cannot make the quorum.
//   - A late answer from round 1 counts in round 2. Duplicate answers and
//     answers from unknown servers are ignored.
//   - A successful GET with ReadRepair sends each answering replica the
//     merged siblings it lacked (fire and forget).
//
// The shell calls Start, delivers Ready's messages, feeds answers to Step,
// calls Tick every tick, and Advance after taking Ready. Not safe for
// concurrent use.
type Op struct {
	id       uint64
	kind     Kind
	key      string
	q        Quorum
	need     int
	put      Sibling
	replicas []int
	state    []replicaState
	sentIn   []int       // per replica: the round of its latest send
	answers  [][]Sibling // GET: per replica, its answer
	errs     []error
	round    int
	ticks    int
	acks     int
	from     vclock.HVC
	hvc      vclock.HVC
	out      []Send
	res      *Result
}

// NewGet returns the op of a GET of key from replicas (its preference list,
// q.N servers or all there are). from is the HVC the client carries (zero:
// none); it goes out with every message.
func NewGet(id uint64, key string, replicas []int, q Quorum, from vclock.HVC) (*Op, error) {
	return newOp(id, KindGet, key, replicas, q, Sibling{}, from)
}

// NewPut returns the op of a PUT of s to key's replicas.
func NewPut(id uint64, key string, replicas []int, q Quorum, s Sibling, from vclock.HVC) (*Op, error) {
	if err := s.Version.Validate(); err != nil {
		return nil, err
	}
	return newOp(id, KindPut, key, replicas, q, s, from)
}

func newOp(id uint64, kind Kind, key string, replicas []int, q Quorum, s Sibling, from vclock.HVC) (*Op, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	need := q.R
	if kind == KindPut {
		need = q.W
	}
	if len(replicas) < need || len(replicas) > q.N {
		return nil, fmt.Errorf("%w: %d replicas for %s of %s (N=%d)", ErrInvalid, len(replicas), kind, q, q.N)
	}
	o := &Op{
		id: id, kind: kind, key: key, q: q, need: need, put: s,
		replicas: slices.Clone(replicas),
		state:    make([]replicaState, len(replicas)),
		sentIn:   make([]int, len(replicas)),
		errs:     make([]error, len(replicas)),
		from:     from,
		hvc:      from,
	}
	if kind == KindGet {
		o.answers = make([][]Sibling, len(replicas))
	}
	return o, nil
}

// ID is the op's id.
func (o *Op) ID() uint64 { return o.id }

// PutSibling is the sibling a PUT op writes (zero for a GET).
func (o *Op) PutSibling() Sibling { return o.put }

// Acks counts the successful answers so far.
func (o *Op) Acks() int { return o.acks }

// Start sends round 1.
func (o *Op) Start() {
	assert(o.round == 0, "Op.Start twice")
	o.round, o.ticks = 1, o.q.RoundTicks
	p := o.q.Preferred
	if p == 0 || p > len(o.replicas) {
		p = len(o.replicas)
	}
	for i := range p {
		o.send(i)
	}
}

// Ready returns the messages to deliver; Advance acknowledges them.
func (o *Op) Ready() []Send { return o.out }

// Advance forgets the messages Ready returned.
func (o *Op) Advance() { o.out = o.out[:0] }

// Done returns the result once the op has finished.
func (o *Op) Done() (Result, bool) {
	if o.res == nil {
		return Result{}, false
	}
	return *o.res, true
}

// Tick counts one tick of the current round's timeout.
func (o *Op) Tick() {
	if o.res != nil || o.round == 0 {
		return
	}
	if o.ticks--; o.ticks > 0 {
		return
	}
	if o.round == 1 {
		o.secondRound()
		return
	}
	o.fail()
}

// Step takes a replica's answer.
func (o *Op) Step(r Reply) {
	if o.res != nil || r.Op != o.id {
		return
	}
	i := slices.Index(o.replicas, r.From)
	if i < 0 || o.state[i] != rsSent {
		return
	}
	if r.Err != nil && r.Round != 0 && r.Round < o.sentIn[i] {
		return // stale: the replica has been asked again
	}
	if r.Err != nil {
		o.errs[i] = r.Err
		o.state[i] = rsFailed
		if !CodeOf(r.Err).Retryable() && CodeOf(r.Err) != CodeInternal {
			o.state[i] = rsRefused
		}
	} else {
		o.state[i] = rsOK
		o.acks++
		o.hvc = MergeHVC(o.hvc, r.HVC)
		if o.kind == KindGet {
			o.answers[i] = r.Siblings
		}
	}
	o.evaluate()
}

// evaluate finishes the op or moves to round 2 when the answers decide it.
func (o *Op) evaluate() {
	if o.acks >= o.need {
		o.succeed()
		return
	}
	if o.acks+o.count(rsSent) >= o.need {
		return // still possible in this round
	}
	if o.round == 1 {
		o.secondRound()
		return
	}
	o.fail()
}

func (o *Op) secondRound() {
	o.round, o.ticks = 2, o.q.RoundTicks
	for i, s := range o.state {
		if s == rsIdle || s == rsSent || s == rsFailed {
			o.send(i)
		}
	}
	if o.acks+o.count(rsSent) < o.need {
		o.fail()
	}
}

func (o *Op) send(i int) {
	o.state[i], o.sentIn[i] = rsSent, o.round
	o.out = append(o.out, Send{To: o.replicas[i], Op: o.id, Kind: o.kind, Key: o.key, Sibling: o.put, HVC: o.from, Round: o.round})
}

func (o *Op) count(s replicaState) int {
	n := 0
	for _, x := range o.state {
		if x == s {
			n++
		}
	}
	return n
}

func (o *Op) succeed() {
	res := &Result{Kind: o.kind, Acks: o.acks, Round: o.round, HVC: o.hvc}
	if o.kind == KindPut {
		res.Version = o.put.Version
	} else {
		var lists [][]Sibling
		for i, s := range o.state {
			if s == rsOK {
				lists = append(lists, o.answers[i])
			}
		}
		res.Siblings = Merge(lists...)
		if o.q.ReadRepair {
			o.repair(res.Siblings)
		}
	}
	o.res = res
}

// repair sends each answering replica the merged siblings it did not have.
func (o *Op) repair(merged []Sibling) {
	for i, s := range o.state {
		if s != rsOK {
			continue
		}
		for _, m := range merged {
			if !CoveredBy(m.Version, o.answers[i]) {
				o.out = append(o.out, Send{To: o.replicas[i], Op: o.id, Kind: KindPut, Key: o.key, Sibling: m, Repair: true, HVC: o.from})
			}
		}
	}
}

func (o *Op) fail() {
	var why []string
	var refusal error
	for i, e := range o.errs {
		if e == nil {
			continue
		}
		why = append(why, fmt.Sprintf("s%d: %v", o.replicas[i], e))
		if refusal == nil && o.state[i] == rsRefused {
			refusal = e
		}
	}
	detail := fmt.Sprintf("%s of %q: %d of %d answers in %d rounds (%s)", o.kind, o.key, o.acks, o.need, o.round, o.q)
	if len(why) > 0 {
		detail += "; " + strings.Join(why, "; ")
	}
	err := fmt.Errorf("%w: %s", ErrQuorum, detail)
	if refusal == nil && slices.ContainsFunc(o.errs, func(e error) bool { return errors.Is(e, ErrPaused) }) {
		refusal = ErrPaused // a rollback is under way: say so, so callers wait and retry
	}
	if refusal != nil {
		err = fmt.Errorf("%w (%w): %s", ErrQuorum, sentinelOf(refusal), detail)
	}
	o.res = &Result{Kind: o.kind, Acks: o.acks, Round: o.round, HVC: o.hvc, Err: err}
}
