package kvcore

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/weft-db/weft/internal/vclock"
)

func quorum(n, r, w int) Quorum {
	q := DefaultQuorum()
	q.N, q.R, q.W, q.RoundTicks, q.ReadRepair = n, r, w, 3, false
	return q
}

func targets(sends []Send) []int {
	var out []int
	for _, s := range sends {
		out = append(out, s.To)
	}
	return out
}

func drain(o *Op) []Send {
	out := slices.Clone(o.Ready())
	o.Advance()
	return out
}

func ack(o *Op, from int) { o.Step(Reply{From: from, Op: o.ID(), Outcome: Applied}) }

func TestOpPutFirstRound(t *testing.T) {
	s := sib(ver(1, 1), "v")
	o, err := NewPut(7, "k", []int{4, 0, 2}, quorum(3, 2, 2), s, vclock.HVC{})
	if err != nil {
		t.Fatal(err)
	}
	o.Start()
	if got := targets(drain(o)); !slices.Equal(got, []int{4, 0, 2}) {
		t.Fatalf("round 1 went to %v", got)
	}
	ack(o, 0)
	if _, done := o.Done(); done {
		t.Fatal("done after 1 of W=2")
	}
	ack(o, 0) // duplicate: ignored
	ack(o, 9) // not a replica: ignored
	if _, done := o.Done(); done {
		t.Fatal("duplicate or stray answer counted")
	}
	ack(o, 2)
	res, done := o.Done()
	if !done || res.Err != nil || res.Acks != 2 || res.Round != 1 || Compare(res.Version, s.Version) != vclock.Equal {
		t.Fatalf("result %+v", res)
	}
}

// TestOpSecondRound (§II-B): "If not [enough answers before the timeout],
// the client performs one more round of request to other servers".
func TestOpSecondRound(t *testing.T) {
	q := quorum(3, 2, 2)
	q.Preferred = 2
	o, _ := NewGet(1, "k", []int{0, 1, 2}, q, vclock.HVC{})
	o.Start()
	if got := targets(drain(o)); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("round 1 (Preferred=2) went to %v", got)
	}
	o.Step(Reply{From: 0, Op: 1, Siblings: []Sibling{sib(ver(1, 1), "a")}})
	for range q.RoundTicks {
		if len(o.Ready()) != 0 {
			t.Fatal("sent before the timeout")
		}
		o.Tick()
	}
	// Round 2: the unanswered replica again and the one not yet asked.
	if got := targets(drain(o)); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("round 2 went to %v", got)
	}
	o.Step(Reply{From: 2, Op: 1, Siblings: []Sibling{sib(ver(1, 2), "b")}})
	res, done := o.Done()
	if !done || res.Err != nil || res.Round != 2 || len(res.Siblings) != 1 || string(res.Siblings[0].Value) != "b" {
		t.Fatalf("result %+v", res)
	}
}

func TestOpFailuresStartRoundTwoAtOnceThenFail(t *testing.T) {
	o, _ := NewPut(1, "k", []int{0, 1, 2}, quorum(3, 2, 2), sib(ver(1, 1), "v"), vclock.HVC{})
	o.Start()
	drain(o)
	down := fmt.Errorf("%w: connection refused", ErrUnavailable)
	o.Step(Reply{From: 0, Op: 1, Err: down, Round: 1})
	o.Step(Reply{From: 1, Op: 1, Err: down, Round: 1})
	// Only replica 2 is left: W=2 is out of reach, so round 2 starts now,
	// re-sending to all three (the failures may have been transient).
	if got := targets(drain(o)); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("round 2 went to %v", got)
	}
	ack(o, 2)
	o.Step(Reply{From: 0, Op: 1, Err: down, Round: 1}) // stale: asked again in round 2
	if _, done := o.Done(); done {
		t.Fatal("a round-1 failure cancelled the round-2 request")
	}
	o.Step(Reply{From: 0, Op: 1, Err: down, Round: 2})
	o.Step(Reply{From: 1, Op: 1, Err: down, Round: 2})
	res, done := o.Done()
	if !done || !errors.Is(res.Err, ErrQuorum) || res.Acks != 1 || res.Round != 2 {
		t.Fatalf("result %+v", res)
	}
}

func TestOpTimeoutInRoundTwoFails(t *testing.T) {
	o, _ := NewGet(1, "k", []int{0, 1, 2}, quorum(3, 3, 1), vclock.HVC{})
	o.Start()
	o.Step(Reply{From: 0, Op: 1})
	for range 2 * 3 {
		o.Tick()
	}
	res, done := o.Done()
	if !done || !errors.Is(res.Err, ErrQuorum) || res.Round != 2 {
		t.Fatalf("result %+v", res)
	}
}

func TestOpRefusalIsNotRetried(t *testing.T) {
	o, _ := NewPut(1, "k", []int{0, 1, 2}, quorum(3, 2, 3), sib(ver(1, 1), "v"), vclock.HVC{})
	o.Start()
	drain(o)
	full := fmt.Errorf("%w: 9 concurrent values", ErrTooManySiblings)
	o.Step(Reply{From: 0, Op: 1, Err: full})
	res, done := o.Done()
	if !done || !errors.Is(res.Err, ErrQuorum) || !errors.Is(res.Err, ErrTooManySiblings) {
		t.Fatalf("W=3 with a refusal should fail at once, naming it: %+v", res)
	}
}

func TestOpReadRepair(t *testing.T) {
	q := quorum(3, 3, 2)
	q.ReadRepair = true
	o, _ := NewGet(1, "k", []int{0, 1, 2}, q, vclock.HVC{})
	o.Start()
	drain(o)
	old, cur, other := sib(ver(1, 1), "old"), sib(ver(1, 2), "cur"), sib(ver(2, 1), "other")
	o.Step(Reply{From: 0, Op: 1, Siblings: []Sibling{old}})
	o.Step(Reply{From: 1, Op: 1, Siblings: []Sibling{cur, other}})
	o.Step(Reply{From: 2, Op: 1, Siblings: []Sibling{cur}})
	res, _ := o.Done()
	if !sameSiblings(res.Siblings, []Sibling{cur, other}) {
		t.Fatalf("merged %v", res.Siblings)
	}
	var got []string
	for _, s := range drain(o) {
		if !s.Repair || s.Kind != KindPut {
			t.Fatalf("not a repair: %+v", s)
		}
		got = append(got, fmt.Sprintf("%d:%s", s.To, s.Sibling.Value))
	}
	if want := []string{"0:cur", "0:other", "2:other"}; !slices.Equal(got, want) {
		t.Fatalf("repairs %v, want %v", got, want)
	}
}

func TestQuorumValidateAndSequential(t *testing.T) {
	for _, tc := range []struct {
		q   Quorum
		seq bool
	}{
		{quorum(3, 2, 2), true}, {quorum(3, 1, 3), true}, {quorum(2, 1, 2), true},
		{quorum(3, 1, 1), false}, {quorum(3, 3, 1), false}, {quorum(5, 2, 3), false},
	} {
		if err := tc.q.Validate(); err != nil {
			t.Fatal(err)
		}
		if tc.q.Sequential() != tc.seq {
			t.Errorf("%s: Sequential = %v", tc.q, !tc.seq)
		}
	}
	if quorum(3, 4, 1).Validate() == nil || quorum(3, 1, 0).Validate() == nil {
		t.Fatal("bad quorum validated")
	}
	if _, err := NewGet(1, "k", []int{0}, quorum(3, 2, 2), vclock.HVC{}); err == nil {
		t.Fatal("fewer replicas than R accepted")
	}
}
