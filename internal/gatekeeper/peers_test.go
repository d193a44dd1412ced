package gatekeeper

import (
	"testing"

	"github.com/weft-db/weft/internal/vclock"
)

// With PeerAck, commits and held answers go out only once every peer has
// announced a clock covering their stamps; announces from another epoch,
// or covering less, change nothing.
func TestPeerAckWaitsForEveryPeer(t *testing.T) {
	c := New(Config{ID: 1, Gatekeepers: 3, Shards: 1, Epoch: 2, PeerAck: true})
	t1, _ := c.BeginCommit()
	t2, _ := c.BeginCommit()
	read := c.Stamp()
	c.Hold(7, read)
	if err := c.Resolve(t1, op(0)); err != nil {
		t.Fatal(err)
	}
	if err := c.Resolve(t2, op(0)); err != nil {
		t.Fatal(err)
	}
	if len(c.Ready()) != 2 {
		t.Fatal("deliveries must not wait for peers")
	}
	if a, r := c.Acked(), c.Released(); len(a) != 0 || len(r) != 0 || !c.WantAnnounce() {
		t.Fatalf("answered before any peer merged: %v %v", a, r)
	}
	own := func(n uint64) vclock.Clock { return vclock.Clock{Epoch: 2, Counters: []uint64{5, n, 0}} }
	c.PeerClock(0, own(t2.Clock.Counters[1]))
	c.PeerClock(2, vclock.Clock{Epoch: 1, Counters: []uint64{0, 99, 0}}) // another epoch
	if a := c.Acked(); len(a) != 0 {
		t.Fatalf("acked with peer 2 behind: %v", a)
	}
	if c.Clock().Counters[0] != 5 {
		t.Fatalf("PeerClock did not merge: %v", c.Clock())
	}
	c.PeerClock(2, own(t1.Clock.Counters[1]))
	if a := c.Acked(); len(a) != 1 || vclock.CompareStamps(a[0], t1) != vclock.Equal {
		t.Fatalf("acked %v, want t1 only", a)
	}
	if r := c.Released(); len(r) != 0 {
		t.Fatalf("released %v before its stamp was merged", r)
	}
	c.PeerClock(2, own(read.Clock.Counters[1]))
	c.PeerClock(0, own(read.Clock.Counters[1]))
	if a, r := c.Acked(), c.Released(); len(a) != 1 || len(r) != 1 || r[0] != 7 || c.WantAnnounce() {
		t.Fatalf("after every peer merged: acked %v released %v want-announce %v", a, r, c.WantAnnounce())
	}
}

// Without PeerAck (one process), nothing waits.
func TestNoPeerAckAnswersAtOnce(t *testing.T) {
	c := New(Config{ID: 0, Gatekeepers: 2, Shards: 1, Epoch: 1})
	s, _ := c.BeginCommit()
	c.Hold(1, c.Stamp())
	if err := c.Resolve(s, op(0)); err != nil {
		t.Fatal(err)
	}
	if a, r := c.Acked(), c.Released(); len(a) != 1 || len(r) != 1 || c.WantAnnounce() {
		t.Fatalf("acked %v released %v", a, r)
	}
}
