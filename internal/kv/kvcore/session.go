package kvcore

import (
	"fmt"

	"github.com/weft-db/weft/internal/vclock"
)

// Session is a client's state across requests (Voldemort's client does the
// replication, §II-B): the ring, its actor id (the name of its entry in the
// versions it writes), the last counter it used, the HVC it carries, and
// its default quorum. It turns requests into Ops; it does no I/O.
//
// A session's actor id must be unique among live sessions (the shells draw
// 64 random bits). Not safe for concurrent use.
type Session struct {
	ring    *Ring
	actor   uint64
	quorum  Quorum
	counter uint64
	nextOp  uint64
	hvc     vclock.HVC
	// EntriesMax bounds the versions this session writes (Descend's
	// pruning). Default VersionEntriesMax.
	EntriesMax int
}

// NewSession returns a session on ring with actor id actor and default
// quorum q (q.N is the store's replication factor).
func NewSession(ring *Ring, actor uint64, q Quorum) (*Session, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if actor == 0 {
		return nil, fmt.Errorf("%w: actor id 0", ErrInvalid)
	}
	return &Session{ring: ring, actor: actor, quorum: q, EntriesMax: VersionEntriesMax}, nil
}

// Actor is the session's actor id.
func (s *Session) Actor() uint64 { return s.actor }

// Quorum is the session's default quorum.
func (s *Session) Quorum() Quorum { return s.quorum }

// SetQuorum changes the default R, W, Preferred, RoundTicks and ReadRepair
// (N stays the store's).
func (s *Session) SetQuorum(q Quorum) error {
	q.N = s.quorum.N
	if err := q.Validate(); err != nil {
		return err
	}
	s.quorum = q
	return nil
}

// HVC is the clock the session carries.
func (s *Session) HVC() vclock.HVC { return s.hvc }

// Replicas returns key's preference list.
func (s *Session) Replicas(key string) []int { return s.ring.Replicas(nil, key, s.quorum.N) }

// Get returns the op of a GET of key with quorum q (nil: the session's).
func (s *Session) Get(key string, q *Quorum) (*Op, error) {
	qq, err := s.pick(q)
	if err != nil {
		return nil, err
	}
	s.nextOp++
	return NewGet(s.nextOp, key, s.Replicas(key), qq, s.hvc)
}

// Put returns the op of a PUT of value to key that supersedes context (the
// versions a GET returned; nil for a blind write, which leaves any existing
// values as siblings).
func (s *Session) Put(key string, value []byte, context []Version, q *Quorum) (*Op, error) {
	qq, err := s.pick(q)
	if err != nil {
		return nil, err
	}
	for _, v := range context {
		if err := v.Validate(); err != nil {
			return nil, err
		}
	}
	next := NextCounter(s.counter, context, s.actor)
	sib := Sibling{Version: Descend(context, s.actor, next, s.EntriesMax), Value: value}
	s.nextOp++
	op, err := NewPut(s.nextOp, key, s.Replicas(key), qq, sib, s.hvc)
	if err != nil {
		return nil, err
	}
	// The counter is used even if the op fails: a failed PUT may have
	// reached some replicas, and its dot must never name another value.
	s.counter = next
	return op, nil
}

// Finish takes a finished op's result into the session (its clock).
func (s *Session) Finish(r Result) { s.hvc = MergeHVC(s.hvc, r.HVC) }

func (s *Session) pick(q *Quorum) (Quorum, error) {
	if q == nil {
		return s.quorum, nil
	}
	qq := *q
	if qq.N == 0 {
		qq.N = s.quorum.N
	}
	if qq.N != s.quorum.N {
		return Quorum{}, fmt.Errorf("%w: N=%d, but the store keeps %d replicas", ErrInvalid, qq.N, s.quorum.N)
	}
	if qq.RoundTicks == 0 {
		qq.RoundTicks = s.quorum.RoundTicks
	}
	return qq, qq.Validate()
}
